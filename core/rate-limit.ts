/**
 * The hosted rate limit (docs/api.md §8: 120 checks per minute per key) as a sliding window: a call is allowed when fewer
 * than `limit` calls of the same key were allowed in the last `windowSeconds`. The decision comes with the header
 * values of the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` and `RateLimit`,
 * structured fields) and, when refused, `Retry-After`. Pure: the clock comes in as a parameter. The call times are
 * state, behind the port of `io/rate-limit/port.ts` (in memory, or shared in PostgreSQL); both decide here.
 */

export type RateDecision = {
  allowed: boolean;
  /** Header values to send with the answer, allowed or not. */
  headers: Record<string, string>;
};

const POLICY = 'hosted';

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
