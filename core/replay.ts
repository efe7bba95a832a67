/**
 * The replay guard's port: what the seller asks of it, the same for the in-memory guard
 * (`api/x402/_replay.ts`, one process) and the shared one (`io/replay/postgres.ts`, every instance).
 */

/** Longest a key is held: a payload signed for years must not pin memory for years. */
export const MAX_HOLD_SECONDS = 24 * 60 * 60;

/** Why a claim was refused; used as the 402 `error` string. */
export type ReplayRefusal = 'payment_in_flight' | 'payment_already_used' | 'settlement_pending';

/** How long a key is held after its flow: until the authorization's `validBefore`, else a fallback window. */
export type ReplayHold = { validBefore: number | null; fallbackSeconds: number };

export type ReplayGuard = {
  /** Marks `key` in flight, or says why it may not be used now; exactly one of concurrent claims wins. `hold` is
   *  how long a shared guard keeps the claim if this instance dies mid-flight (its settlement may have gone out). */
  claim(key: string, hold: ReplayHold): Promise<ReplayRefusal | null>;
  /** Ends the flight of `key`; with `hold`, refuses it until `hold.validBefore` (or the fallback window). */
  release(key: string, hold: (ReplayHold & { reason: ReplayRefusal }) | null): Promise<void>;
};

/** The epoch second a hold ends, `at` being now: never later than {@link MAX_HOLD_SECONDS} ahead. */
export function holdUntil(at: number, hold: ReplayHold): number {
  return Math.min(hold.validBefore ?? at + hold.fallbackSeconds, at + MAX_HOLD_SECONDS);
}
