import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // End-to-end suites start sellers, anvil and the service on loopback ports; give them room on 2 cores.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { TZ: 'UTC' },
    // .ci/run reads the JSON report to print its closing "N passed, N failed" line.
    reporters: process.env.VITEST_JSON_REPORT ? ['default', 'json'] : ['default'],
    ...(process.env.VITEST_JSON_REPORT ? { outputFile: { json: process.env.VITEST_JSON_REPORT } } : {}),
  },
});
