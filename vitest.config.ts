import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Three projects, one run, one report (docs/performance.md "The test suite"). `unit/` and `integration/` share
 * their workers: a fresh process per file re-evaluated the same modules (a service's start imports some 1,400) for
 * every file, which cost more than the tests themselves. Their files keep no state outside what they open and close
 * (no module mocks, no environment changes, spies restored), and `restoreMocks` restores any spy left over.
 * `e2e/` and `browser/` keep a process per file: they spawn servers, anvil, nginx and PostgreSQL clusters and kill
 * them, so one file's children and signals never reach another's.
 */
export default defineConfig({
  test: {
    // End-to-end suites start sellers, anvil and the service on loopback ports; give them room on 2 cores.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default for a run is one worker fewer than the cores: a single worker on 2 cores, which leaves a core
    // idle whenever a test waits on a server, a cluster or a browser of its own.
    maxWorkers: Math.max(2, availableParallelism()),
    env: { TZ: 'UTC' },
    restoreMocks: true,
    projects: [
      {
        extends: true,
        // The packages' own tests are unit tests of the package (packages/x402-guard).
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/browser/**/*.test.ts'],
          // The run's folder of sites the browser files share (test/helpers/prepared-sites.ts).
          globalSetup: ['test/helpers/prepared-sites.setup.ts'],
        },
      },
    ],
    // .ci/run reads the JSON report to print its closing "N passed, N failed" line; it covers every project.
    reporters: process.env.VITEST_JSON_REPORT ? ['default', 'json'] : ['default'],
    ...(process.env.VITEST_JSON_REPORT ? { outputFile: { json: process.env.VITEST_JSON_REPORT } } : {}),
  },
});
