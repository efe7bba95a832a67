/**
 * The in-memory replay guard of the seller.
 *
 * A payment (EIP-3009 `from` + `nonce`) being verified or settled right now is refused at once, so two
 * concurrent requests with one signature can never both reach the paid handler. After the flow ends the key
 * is either released (nothing was broadcast, so the same payload may be retried: spec §2.7
 * `safe_to_retry_same_payload`) or held until the authorization expires (a settlement landed, is pending, or
 * its outcome is unknown). The facilitator refusing used nonces on chain remains the durable defence; this
 * guard is per process and forgets on restart.
 */

/** Longest a key is held: a payload signed for years must not pin memory for years. */
const MAX_HOLD_SECONDS = 24 * 60 * 60;

/** Why a claim was refused; used as the 402 `error` string. */
export type ReplayRefusal = 'payment_in_flight' | 'payment_already_used' | 'settlement_pending';

/** Creates a guard; `now` is the injected clock. */
export function createReplayGuard(now: () => Date) {
  const inFlight = new Set<string>();
  const held = new Map<string, { until: number; reason: ReplayRefusal }>();
  const seconds = () => Math.floor(now().getTime() / 1000);

  function prune(at: number): void {
    for (const [key, entry] of held) if (entry.until <= at) held.delete(key);
  }

  return {
    /** Marks `key` in flight, or says why it may not be used now. Synchronous, so concurrent requests race
     *  on one event-loop turn and exactly one wins. */
    claim(key: string): ReplayRefusal | null {
      if (inFlight.has(key)) return 'payment_in_flight';
      const at = seconds();
      prune(at);
      const entry = held.get(key);
      if (entry) return entry.reason;
      inFlight.add(key);
      return null;
    },
    /** Ends the flight of `key`; with `hold`, refuses it until `hold.validBefore` (or a fallback window). */
    release(
      key: string,
      hold: { validBefore: number | null; reason: ReplayRefusal; fallbackSeconds: number } | null,
    ) {
      inFlight.delete(key);
      if (!hold) return;
      const at = seconds();
      const until = Math.min(hold.validBefore ?? at + hold.fallbackSeconds, at + MAX_HOLD_SECONDS);
      if (until > at) held.set(key, { until, reason: hold.reason });
    },
    /** Counts, for tests and metrics. */
    size: () => ({ inFlight: inFlight.size, held: held.size }),
  };
}

/** The guard's type, for wiring. */
export type ReplayGuard = ReturnType<typeof createReplayGuard>;
