/**
 * The hosted rate limit (spec §8: 120 checks per minute per key) as a sliding window: a call is allowed when fewer
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

/** Creates a limiter; `now` is milliseconds since the epoch. */
export function createRateLimiter(options: {
  limit: number;
  windowSeconds: number;
  now: () => number;
}): RateLimiter {
  const { limit, windowSeconds } = options;
  const windowMs = windowSeconds * 1000;
  const policy = `"${POLICY}";q=${limit};w=${windowSeconds}`;
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
      const times = (calls.get(key) ?? []).filter((at) => at > now - windowMs);
      const allowed = times.length < limit;
      if (allowed) times.push(now);
      calls.set(key, times);
      // Seconds until the oldest counted call leaves the window and frees a unit.
      const oldest = times[0] ?? now;
      const reset = Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
      const remaining = limit - times.length;
      const headers: Record<string, string> = {
        'ratelimit-policy': policy,
        ratelimit: `"${POLICY}";r=${remaining};t=${reset}`,
      };
      if (!allowed) headers['retry-after'] = String(reset);
      return { allowed, headers };
    },
  };
}
