/**
 * Configuration, read once from the environment by the entry file (README "Configuration").
 * Every variable is optional; the defaults are the embedded ones `npm start` runs with.
 */
import * as v from 'valibot';
import { type Cidr, parseCidrList } from '../core/ssrf.ts';
import { DUCKDB_LIMITS, type DuckDbLimits } from '../io/duckdb/instance.ts';
import { readEnv, SHARED_ENV, type SharedConfig, sharedConfigOf } from '../io/environment.ts';
import { DATABASE_WAIT_MS } from '../io/postgres/wait.ts';

export type Config = SharedConfig & {
  trustProxy: boolean;
  /** Peers whose `X-Forwarded-For` is honoured when `trustProxy` is on: the proxy's own addresses. */
  trustedProxies: Cidr[];
  facilitatorUrl: string | null;
  rpcUrls: string[];
  /** The `payTo` of the service's own 402s; null means "use the wallet generated under DATA_DIR". */
  serviceWallet: `0x${string}` | null;
  /** Exempt keys (`name:secret`, comma-separated); `self` names the service's own self-test client. */
  exemptKeys: Array<{ name: string; secret: string }>;
  /** `DATABASE_URL`: shared state for several instances in PostgreSQL; null keeps the embedded DuckDB. */
  database: { url: string; poolSize: number; waitMs: number } | null;
  /** `SHUTDOWN_DEADLINE_MS`: how long a clean close after SIGTERM may take before the process exits without it. */
  shutdownDeadlineMs: number;
  /** `IMPORT_WAIT_MS`: how long `npm run listings:import` waits for a running server to take its file. */
  importWaitMs: number;
  /** `WATCH_INTERVAL_S`: seconds between two probes of a watched endpoint (default 600). */
  watchIntervalSeconds: number;
  /**
   * `WATCH_LEASE_MS`: how long an instance holds a watched endpoint it is probing (default 15000, the
   * `PROBE_LEASE_MS` of `api/watch-probes.ts`); a dead instance's endpoints are probed again once it ends.
   */
  watchLeaseMs: number;
  /** `DUCKDB_MEMORY_MB`, `DUCKDB_THREADS`: the bounds of each embedded DuckDB database (`io/duckdb/instance.ts`). */
  duckdb: DuckDbLimits;
};

const Address = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x address of 40 hex digits'));
/** A duration in milliseconds, 1 ms to an hour. */
const Millis = v.pipe(
  v.string(),
  v.regex(/^\d{1,7}$/),
  v.transform(Number),
  v.minValue(1),
  v.maxValue(3_600_000),
);
const Flag = v.picklist(['0', '1', 'true', 'false', '']);

const Env = v.object({
  ...SHARED_ENV,
  TRUST_PROXY: v.optional(Flag, ''),
  TRUSTED_PROXIES: v.optional(v.string(), '127.0.0.1/8,::1'),
  FACILITATOR_URL: v.optional(v.pipe(v.string(), v.url())),
  RPC_URLS: v.optional(v.string(), ''),
  SERVICE_WALLET: v.optional(Address),
  EXEMPT_KEYS: v.optional(v.string(), ''),
  DATABASE_URL: v.optional(
    v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\/\S+$/, 'a postgres:// URL'), v.url()),
  ),
  DATABASE_POOL_SIZE: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,3}$/), v.transform(Number), v.minValue(1), v.maxValue(500)),
    '10',
  ),
  // The longest a request waits on one call to PostgreSQL (io/postgres/wait.ts).
  DATABASE_WAIT_MS: v.optional(Millis, String(DATABASE_WAIT_MS)),
  WATCH_INTERVAL_S: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,6}$/), v.transform(Number), v.minValue(1), v.maxValue(86_400)),
    '600',
  ),
  // Below the default only for tests: a probe slower than two thirds of the lease is dropped (docs/deploy.md).
  WATCH_LEASE_MS: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,7}$/), v.transform(Number), v.minValue(1000), v.maxValue(3_600_000)),
    '15000',
  ),
  SHUTDOWN_DEADLINE_MS: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,7}$/), v.transform(Number), v.minValue(1), v.maxValue(3_600_000)),
    '30000',
  ),
  IMPORT_WAIT_MS: v.optional(Millis, '15000'),
  DUCKDB_MEMORY_MB: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,6}$/), v.transform(Number), v.minValue(16), v.maxValue(1_048_576)),
    String(DUCKDB_LIMITS.memoryMb),
  ),
  DUCKDB_THREADS: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,3}$/), v.transform(Number), v.minValue(1), v.maxValue(256)),
    String(DUCKDB_LIMITS.threads),
  ),
});

/** Reads and validates the environment; throws a `TypeError` naming the bad variable. */
export function readConfig(env: Record<string, string | undefined>): Config {
  const e = readEnv(Env, env);
  return {
    ...sharedConfigOf(e),
    trustProxy: e.TRUST_PROXY === '1' || e.TRUST_PROXY === 'true',
    trustedProxies: proxyList(e.TRUSTED_PROXIES),
    facilitatorUrl: e.FACILITATOR_URL ?? null,
    rpcUrls: splitList(e.RPC_URLS),
    serviceWallet: (e.SERVICE_WALLET as `0x${string}` | undefined) ?? null,
    exemptKeys: splitList(e.EXEMPT_KEYS).map(parseExemptKey),
    database: e.DATABASE_URL
      ? { url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, waitMs: e.DATABASE_WAIT_MS }
      : null,
    shutdownDeadlineMs: e.SHUTDOWN_DEADLINE_MS,
    importWaitMs: e.IMPORT_WAIT_MS,
    watchIntervalSeconds: e.WATCH_INTERVAL_S,
    watchLeaseMs: e.WATCH_LEASE_MS,
    duckdb: { memoryMb: e.DUCKDB_MEMORY_MB, threads: e.DUCKDB_THREADS },
  };
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function proxyList(text: string): Cidr[] {
  try {
    return parseCidrList(text);
  } catch {
    throw new TypeError('[spotcheck] invalid TRUSTED_PROXIES: comma-separated IPv4/IPv6 addresses or CIDRs');
  }
}

function parseExemptKey(entry: string): { name: string; secret: string } {
  const at = entry.indexOf(':');
  const name = entry.slice(0, at);
  const secret = entry.slice(at + 1);
  if (at < 1 || secret.length < 16) {
    throw new TypeError(
      '[spotcheck] invalid EXEMPT_KEYS: each entry is name:secret with a secret of 16+ characters',
    );
  }
  return { name, secret };
}
