/**
 * Probe reuse (docs/api.md §2.3 `cached`/`cache_ttl_s`, §8 "Probe reuse: 5 minutes per normalized URL and method"), keyed
 * on the URL as requested (see {@link probeKey}).
 * One probe per key at a time: concurrent callers share the one in flight, so a burst of checks of the same URL
 * costs the target one request and every caller sees the same answer.
 *
 * Every outcome is stored, failures included: docs/api.md promises that consecutive calls agree, and a target that
 * timed out should not be hammered by retries for the next five minutes either.
 *
 * The entries live in an `lru-cache` bounded by count and by characters (docs/decisions.md "Libraries and what
 * stays by hand"); freshness is decided here, against the injected clock, so a clock that steps back fails closed.
 */
import { LRUCache } from 'lru-cache';
import type { HttpMethod, ProbeOutcome } from '../../core/model.ts';

/** A bounded, time-limited store of probe outcomes keyed by {@link probeKey}. */
export type ProbeCache = {
  /**
   * The stored outcome of `key` if younger than the ttl (`cached: true`), else the result of one `run()`.
   * A caller that joins a run already in flight gets `cached: true`: it did not cause the probe, and its answer
   * is the same reuse a later caller would see. A rejected run rejects every caller sharing it and stores nothing.
   */
  get(key: string, run: () => Promise<ProbeOutcome>): Promise<{ outcome: ProbeOutcome; cached: boolean }>;
  /** The ttl in whole seconds, as published in `probe.cache_ttl_s`. */
  readonly ttlSeconds: number;
  /** Stored entries (fresh or not yet evicted); in-flight runs are not counted. */
  readonly size: number;
  /** What the stored outcomes count against `maxChars`, in string length (one outcome counts at most `maxChars`). */
  readonly chars: number;
};

/** Options of {@link createProbeCache}; `now` is a millisecond clock (injected, so tests step it). */
export type ProbeCacheOptions = {
  ttlMs: number;
  maxEntries: number;
  now: () => number;
  /** Budget for what the stored outcomes hold (headers and bodies, in UTF-16 code units, about bytes / 2); a
   *  hostile target sending the largest headers and body the prober accepts fills it, not the heap. */
  maxChars?: number;
};

type Entry = { outcome: ProbeOutcome; startedAt: number };

/**
 * The cache key of one probe: method and the URL exactly as requested (`parseTargetUrl(...).url.href`), not the
 * docs/api.md §2.10 dedupe form: `/paid` and `/paid/`, or `?a=1&b=2` and `?b=2&a=1`, are different requests to a strict
 * server, so one must never answer for the other (docs/decisions.md "Probe reuse").
 *
 * @example probeKey('https://api.example/x', 'GET') // 'GET https://api.example/x'
 */
export function probeKey(requestedUrl: string, method: HttpMethod): string {
  return `${method} ${requestedUrl}`;
}

/**
 * The one way to probe through the cache: the key is built from the very URL handed to `probe`, so a stored
 * outcome always answers for the URL it requested.
 *
 * @example const { outcome, cached } = await cachedProbe(cache, prober.probe, 'https://api.example/x', 'GET');
 */
export function cachedProbe(
  cache: ProbeCache,
  probe: (url: string, method: HttpMethod) => Promise<ProbeOutcome>,
  url: string,
  method: HttpMethod,
): Promise<{ outcome: ProbeOutcome; cached: boolean }> {
  return cache.get(probeKey(url, method), () => probe(url, method));
}

/**
 * Creates a probe cache. Entries expire `ttlMs` after the probe started (the moment `probed_at` names) and the
 * least recently used entries are evicted past `maxEntries` or `maxChars`; an outcome larger than the whole
 * character budget is kept alone rather than refused.
 *
 * @example
 * const cache = createProbeCache({ ttlMs: 300_000, maxEntries: 10_000, now: Date.now });
 * const { outcome, cached } = await cachedProbe(cache, prober.probe, url, 'GET');
 */
export function createProbeCache(options: ProbeCacheOptions): ProbeCache {
  const { ttlMs, maxEntries, now } = options;
  const maxChars = options.maxChars ?? Number.MAX_SAFE_INTEGER;
  if (!(ttlMs >= 0) || !Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError('[probe-cache] ttlMs must be >= 0 and maxEntries an integer >= 1');
  }
  if (!Number.isSafeInteger(maxChars) || maxChars < 1) {
    throw new RangeError('[probe-cache] maxChars must be an integer >= 1');
  }
  const stored = new LRUCache<string, Entry>({
    max: maxEntries,
    maxSize: maxChars,
    // Counted at most the whole budget, so an oversized outcome evicts every other entry instead of being refused.
    sizeCalculation: (entry) => Math.min(sizeOf(entry.outcome), maxChars),
  });
  const inFlight = new Map<string, Promise<ProbeOutcome>>();

  async function get(key: string, run: () => Promise<ProbeOutcome>) {
    const hit = stored.get(key);
    if (hit !== undefined) {
      // Fail closed on a clock that went backwards or NaN: the entry is treated as stale.
      const age = now() - hit.startedAt;
      if (age >= 0 && age < ttlMs) return { outcome: hit.outcome, cached: true };
      stored.delete(key);
    }
    const shared = inFlight.get(key);
    if (shared !== undefined) return { outcome: await shared, cached: true };

    const startedAt = now();
    const pending = (async () => run())();
    inFlight.set(key, pending);
    try {
      const outcome = await pending;
      stored.set(key, { outcome, startedAt });
      return { outcome, cached: false };
    } finally {
      inFlight.delete(key);
    }
  }

  return {
    get,
    get ttlSeconds() {
      return Math.round(ttlMs / 1000);
    },
    get size() {
      return stored.size;
    },
    get chars() {
      return stored.calculatedSize;
    },
  };
}

/** What an outcome holds, in string length: header names and values and the body dominate. */
function sizeOf(outcome: ProbeOutcome): number {
  if (outcome.kind !== 'response') return 256 + outcome.detail.length;
  let total = 512 + outcome.response.finalUrl.length + (outcome.response.body?.length ?? 0);
  for (const [name, value] of Object.entries(outcome.response.headers)) total += name.length + value.length;
  return total;
}
