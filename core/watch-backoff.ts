/**
 * When a webhook delivery is tried again (docs/api.md "Watches"): exponential backoff with full jitter, from
 * `WATCH_LIMITS.retryBaseSeconds` doubling up to `WATCH_LIMITS.retryCapSeconds`, for `WATCH_LIMITS.retryHours`
 * after the event was first due; then the delivery gives up and the watch is paused. Pure: the random draw is a
 * parameter.
 */
import { WATCH_LIMITS } from './limits.ts';

/** What to do after a failed attempt: try again at `atMs`, or give up. */
export type RetryStep = { kind: 'retry'; atMs: number } | { kind: 'give_up' };

/**
 * The step after failed attempt number `attempts` (1 for the first), made at `nowMs` for an event first due at
 * `firstDueMs`; `random` is uniform in [0, 1). The delay is drawn in [half, whole] of the exponential figure, so
 * retries of many receivers spread out without ever coming early.
 * @example nextRetry(1, 0, 0, () => 0.5) // { kind: 'retry', atMs: 7500 }
 */
export function nextRetry(
  attempts: number,
  firstDueMs: number,
  nowMs: number,
  random: () => number,
): RetryStep {
  const window = WATCH_LIMITS.retryHours * 3600 * 1000;
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const whole = Math.min(WATCH_LIMITS.retryBaseSeconds * 2 ** exponent, WATCH_LIMITS.retryCapSeconds) * 1000;
  const delay = Math.round(whole / 2 + (whole / 2) * Math.min(Math.max(random(), 0), 1));
  const atMs = nowMs + delay;
  if (atMs - firstDueMs > window) return { kind: 'give_up' };
  return { kind: 'retry', atMs };
}

/**
 * The next due time of an endpoint probed at `nowMs`: the interval shortened by up to 10 % at random, so that
 * watches made together do not probe together forever. Never longer than the interval: a probe is promised within
 * the interval plus 10 %, and that 10 % is the loop's margin for a busy moment (BENCHMARKS.md "watches-scale").
 * @example nextProbeAt(0, 600, () => 0.5) // 570000
 */
export function nextProbeAt(nowMs: number, intervalSeconds: number, random: () => number): number {
  const spread = 0.9 + 0.1 * Math.min(Math.max(random(), 0), 1);
  return nowMs + Math.round(intervalSeconds * 1000 * spread);
}
