/**
 * Starting the real service for a benchmark: `api/main.ts` in its own process over a fresh DATA_DIR, durable
 * receipts (the journal fsyncs every batch: it is the default and cannot be turned off from the environment), the
 * SSRF gate on with only loopback exempted (`PROBE_ALLOW_CIDRS`, as in tests) and one exempt key so the free
 * quota never interferes with a measurement.
 */
import { type ServerProcess, startServer, tempDataDir } from './processes.ts';

/** The exempt key the benchmarks present in `x-service-key`. */
export const BENCH_KEY = 'bench-exempt-secret-0123456789abcdef';

/** A running service and the DATA_DIR it owns. */
export type BenchService = ServerProcess & {
  dataDir: string;
  headers: Record<string, string>;
  /** Removes DATA_DIR (after `stop`); kept when BENCH_KEEP_DATA is set. */
  remove(): Promise<void>;
};

/**
 * Starts the service; `env` adds or overrides variables (e.g. FACILITATOR_URL); `prepare` runs on the fresh DATA_DIR
 * before the server starts (e.g. to create integrators).
 */
export async function startService(
  env: Record<string, string> = {},
  prepare?: (dataDir: string) => Promise<void>,
): Promise<BenchService> {
  const data = await tempDataDir('service');
  try {
    await prepare?.(data.dir);
    const server = await startServer({
      module: 'api/main.ts',
      readyPath: '/healthz',
      env: {
        DATA_DIR: data.dir,
        PROBE_ALLOW_CIDRS: '127.0.0.0/8',
        EXEMPT_KEYS: `bench:${BENCH_KEY}`,
        ...env,
      },
      ...(process.env.BENCH_CPU_PROF ? { cpuProfDir: process.env.BENCH_CPU_PROF } : {}),
    });
    return {
      ...server,
      dataDir: data.dir,
      headers: { 'x-service-key': BENCH_KEY },
      async remove() {
        if (process.env.BENCH_KEEP_DATA) console.log(`  (DATA_DIR kept: ${data.dir})`);
        else await data.remove();
      },
    };
  } catch (error) {
    await data.remove();
    throw error;
  }
}
