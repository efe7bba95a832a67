/**
 * `deps.reputation` of the app: the reputation of a checked URL's host (`core/reputation.ts` scores it), read from
 * the store and kept per host in an `lru-cache` bounded by host count (docs/decisions.md "Libraries and what stays
 * by hand"). Freshness and the refresh are decided here, against the injected clock.
 */
import { LRUCache } from 'lru-cache';
import type { PaidCallRecord } from '../core/catalog.ts';
import { type HostCheck, type HostObservation, type Reputation, reputation } from '../core/reputation.ts';

/** Where a reputation lookup reads its evidence; the store satisfies it. */
export type ReputationSource = {
  observationsByHost(host: string, limit: number): Promise<HostObservation[]>;
  checksByHost(host: string, limit: number): Promise<HostCheck[]>;
  paidCalls(query: { host: string; perService: number }): Promise<readonly PaidCallRecord[]>;
};

type Kept = { at: number; value: Promise<Reputation | null>; refreshing: boolean };

/**
 * The reputation of the host of a checked URL, or null when the store fails (docs/api.md §2.1: "Null when the
 * store is unavailable").
 * @example const lookup = createReputationLookup({ source: store, now: () => new Date() }); await lookup({ url })
 */
export function createReputationLookup(options: {
  source: ReputationSource;
  now: () => Date;
  onError?: (error: unknown) => void;
  /** How long a host's reputation is fresh (default 60 s): it moves with days of data, not seconds. Past it, the
   *  kept value answers while a refresh runs. */
  ttlMs?: number;
  /** Hosts kept (default 10,000); the least recently asked is dropped first. */
  maxHosts?: number;
}): (params: { url: string }) => Promise<Reputation | null> {
  const ttlMs = options.ttlMs ?? 60_000;
  const cache = new LRUCache<string, Kept>({ max: options.maxHosts ?? 10_000 });
  const compute = async (host: string): Promise<Reputation | null> => {
    try {
      const [observations, checks, paidCalls] = await Promise.all([
        options.source.observationsByHost(host, 500),
        options.source.checksByHost(host, 500),
        options.source.paidCalls({ host, perService: 20 }),
      ]);
      return reputation({ host, observations, checks, paidCalls, now: options.now() });
    } catch (error) {
      options.onError?.(error);
      return null;
    }
  };
  return async ({ url }) => {
    const host = new URL(url).host;
    const at = options.now().getTime();
    const hit = cache.get(host);
    if (hit) {
      if (at - hit.at >= 0 && at - hit.at < ttlMs) return hit.value;
      // Past its TTL the kept value still answers, at once, while one refresh runs: a check never waits for the
      // store (which may be busy taking in a crawl run, bench/crawl-ingest.ts). A failed refresh keeps the value.
      if (!hit.refreshing) {
        hit.refreshing = true;
        const next = compute(host);
        void next.then((value) => {
          if (value !== null)
            cache.set(host, { at: options.now().getTime(), value: next, refreshing: false });
          else hit.refreshing = false;
        });
      }
      return hit.value;
    }
    // Concurrent callers share one computation; a failed one (null) is not kept.
    const value = compute(host);
    cache.set(host, { at, value, refreshing: false });
    if ((await value) === null) cache.delete(host);
    return value;
  };
}
