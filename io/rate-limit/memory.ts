/**
 * The hosted rate limit of one process (`port.ts`): each key's allowed call times in a map, decided by
 * `decideRate` (`core/rate-limit.ts`); keys idle for a whole window are swept.
 */
import { decideRate, type RateDecision } from '../../core/rate-limit.ts';
import type { RatePort } from './port.ts';

/** The in-memory limiter: the port's decision taken synchronously. */
export type RateLimiter = {
  /** Counts one call of `key` now when allowed; a refused call is not counted. */
  take(key: string): RateDecision;
};

/** The port over an in-memory limiter. */
export function ratePort(limiter: RateLimiter): RatePort {
  return { take: (key) => Promise.resolve(limiter.take(key)) };
}

/** Creates a limiter; `now` is milliseconds since the epoch. */
export function createRateLimiter(options: {
  limit: number;
  windowSeconds: number;
  now: () => number;
}): RateLimiter {
  const windowMs = options.windowSeconds * 1000;
  /** Allowed call times per key, oldest first, at most `limit` of them. */
  const calls = new Map<string, number[]>();
  let sweptAt = 0;

  const sweep = (now: number) => {
    // Keys idle for a whole window hold nothing worth keeping.
    if (now - sweptAt < windowMs) return;
    sweptAt = now;
    for (const [key, times] of calls) if ((times.at(-1) ?? 0) <= now - windowMs) calls.delete(key);
  };

  return {
    take(key) {
      const now = options.now();
      sweep(now);
      const { times, ...decision } = decideRate(calls.get(key) ?? [], now, options);
      calls.set(key, times);
      return decision;
    },
  };
}
