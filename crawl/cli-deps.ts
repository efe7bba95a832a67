/**
 * What the crawl's command-line entry points share: the environment (`io/environment.ts`), the SSRF-gated probers
 * (loopback only through `PROBE_ALLOW_CIDRS`), the service's signing key under `DATA_DIR`, the clocks.
 */
import { join } from 'node:path';
import * as v from 'valibot';
import { parseCidrList } from '../core/ssrf.ts';
import { dataPaths } from '../io/data-paths.ts';
import { readEnv, SHARED_ENV, type SharedConfig, sharedConfigOf } from '../io/environment.ts';
import { loadSigningKeys } from '../io/keys.ts';
import { readOptOutFiles } from '../io/opt-out.ts';
import { createProber } from '../io/probe/prober.ts';
import { spotcheckUserAgent } from '../io/probe/user-agent.ts';
import { pooledRandom } from '../io/random-pool.ts';
import { openHostBudget } from './host-budget.ts';
import type { EndpointDeps } from './probe-endpoint.ts';
import { MAX_DEFAULT_CONCURRENCY } from './run.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES, SOURCE_TIMEOUT_MS } from './sources/fetch-json.ts';

/** docs/api.md §2.10, §8: the crawl's probe budget. */
export const CRAWL_TIMEOUT_MS = 5000;

/** Reads the environment and builds the shared parts; throws a `TypeError` naming a bad variable. */
export async function cliDeps(env: Record<string, string | undefined>) {
  const config: SharedConfig = sharedConfigOf(readEnv(v.object(SHARED_ENV), env));
  const allow = parseCidrList(config.probeAllowCidrs);
  // Named, with the rules page where a seller reads what is probed and how to opt out.
  const userAgent = spotcheckUserAgent(config.baseUrl);
  const { signer } = await loadSigningKeys({
    dir: dataPaths(config.dataDir).keys,
    ...(config.signingKeyFile ? { keyFile: config.signingKeyFile } : {}),
  });
  const endpoint: Omit<EndpointDeps, 'runId' | 'origin'> = {
    // A host's next GET takes the connection its last one left, to the same approved address (io/probe/prober.ts). Pacing
    // holds hosts back, so up to as many connections may wait idle as may be in flight. A probe queued behind the
    // per-address limit waits its turn however long: the limit's slots are each freed within a budget, and a
    // timeout published for a server that was never asked would be false.
    prober: createProber({
      allow,
      userAgent,
      timeoutMs: CRAWL_TIMEOUT_MS,
      reuseConnections: true,
      maxIdleConnections: MAX_DEFAULT_CONCURRENCY,
      addressQueueMs: Number.POSITIVE_INFINITY,
    }),
    signer,
    now: () => new Date(),
    // Receipt ids: one call into the CSPRNG per 256 ids (io/random-pool.ts), not one per probe.
    random: pooledRandom(),
    baseUrl: config.baseUrl,
  };
  return {
    config,
    endpoint,
    // What the crawl and the bazaar check honour together (docs/decisions.md "Politeness").
    politeness: {
      optOut: await readOptOutFiles([
        join(import.meta.dirname, '../data/opt-out.json'),
        join(config.dataDir, 'opt-out.json'),
      ]),
      openBudget: (runId: string, listed: ReadonlyMap<string, number>) =>
        openHostBudget({ dir: join(config.dataDir, 'requests'), who: runId, now: new Date(), listed }),
    },
    fetchJson: fetchJsonVia(
      createProber({ allow, userAgent, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: SOURCE_TIMEOUT_MS }),
    ),
    monotonic: () => performance.now(),
  };
}

/** A positive integer option, or a usage error. */
export function positiveInt(value: string | undefined, name: string): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${name} takes a whole number above 0`);
  return n;
}

/** A command-line mistake: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override name = 'Crawl.UsageError';
}
