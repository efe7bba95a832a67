/**
 * `Retry-After` on a `429` or `503` (RFC 9110 §10.2.3): how long the server asks to be left alone. The crawl pauses
 * the host that long and asks again later in the same run, within the run's time budget (docs/decisions.md
 * "Politeness"); a probe without one, or past the budget, is recorded as it answered.
 */
import type { ProbeOutcome } from './model.ts';

/** Statuses whose `Retry-After` pauses a host. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Milliseconds the answer asks to wait: delta-seconds, or an HTTP date less `now`; 0 for a date in the past; null
 * when the answer is not a 429/503 or carries no readable `Retry-After`.
 * @example retryAfterMs(outcome429WithRetryAfter2, new Date()) // 2000
 */
export function retryAfterMs(outcome: ProbeOutcome, now: Date): number | null {
  if (outcome.kind !== 'response' || !RETRY_STATUSES.has(outcome.response.status)) return null;
  const value = outcome.response.headers['retry-after']?.trim();
  if (value === undefined || value.length === 0 || value.length > 64) return null;
  if (/^\d{1,9}$/.test(value)) return Number(value) * 1000;
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return null;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now.getTime()) : null;
}
