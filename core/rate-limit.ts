/**
 * The hosted rate limit (docs/api.md §8: 120 checks per minute per key) as a sliding window: a call is allowed when fewer
 * than `limit` calls of the same key were allowed in the last `windowSeconds`. The decision comes with the header
 * values of the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` and `RateLimit`,
 * structured fields) and, when refused, `Retry-After`. Pure: the clock comes in as a parameter.
 */

export type RateDecision = {
  allowed: boolean;
  /** Header values to send with the answer, allowed or not. */
  headers: Record<string, string>;
};

export type RateLimiter = {
  /** Counts one call of `key` now when allowed; a refused call is not counted. */
  take(key: string): RateDecision;
};

const POLICY = 'hosted';

/**
 * What a rate limiter asks of its store of call times: the in-memory limiter of one process ({@link ratePort}), or
 * the window every instance shares (`io/hosted-meter/postgres.ts`, `DATABASE_URL`).
 */
export type RatePort = {
  take(key: string): Promise<RateDecision>;
};

/** The port over an in-memory limiter. */
export function ratePort(limiter: RateLimiter): RatePort {
  return { take: (key) => Promise.resolve(limiter.take(key)) };
}

/**
 * One decision of the sliding window: `times` are the key's allowed call times (ms, oldest first); returns the
 * decision and the times to keep (the window's, plus `now` when allowed).
 */
export function decideRate(
  times: readonly number[],
  now: number,
  options: { limit: number; windowSeconds: number },
): RateDecision & { times: number[] } {
  const { limit, windowSeconds } = options;
  const windowMs = windowSeconds * 1000;
  const kept = times.filter((at) => at > now - windowMs);
  const allowed = kept.length < limit;
  if (allowed) kept.push(now);
  // Seconds until the oldest counted call leaves the window and frees a unit.
  const oldest = kept[0] ?? now;
  const reset = Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  const headers: Record<string, string> = {
    'ratelimit-policy': `"${POLICY}";q=${limit};w=${windowSeconds}`,
    ratelimit: `"${POLICY}";r=${limit - kept.length};t=${reset}`,
  };
  if (!allowed) headers['retry-after'] = String(reset);
  return { allowed, headers, times: kept };
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
