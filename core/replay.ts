/**
 * What the replay guard decides with: why a payment is refused and how long it is held. The claims themselves are
 * state, behind the port of `io/replay/port.ts` (in memory, or shared in PostgreSQL).
 */

/** Longest a key is held: a payload signed for years must not pin memory for years. */
export const MAX_HOLD_SECONDS = 24 * 60 * 60;

/** Why a claim was refused; used as the 402 `error` string. */
export type ReplayRefusal = 'payment_in_flight' | 'payment_already_used' | 'settlement_pending';

/** How long a key is held after its flow: until the authorization's `validBefore`, else a fallback window. */
export type ReplayHold = { validBefore: number | null; fallbackSeconds: number };

/** The epoch second a hold ends, `at` being now: never later than {@link MAX_HOLD_SECONDS} ahead. */
export function holdUntil(at: number, hold: ReplayHold): number {
  return Math.min(hold.validBefore ?? at + hold.fallbackSeconds, at + MAX_HOLD_SECONDS);
}
