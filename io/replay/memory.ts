/**
 * The seller's replay guard of one process (`port.ts`; forgets on restart).
 *
 * A payment (EIP-3009 `from` + `nonce`) being verified or settled right now is refused at once, so two
 * concurrent requests with one signature can never both reach the paid handler. After the flow ends the key
 * is either released (nothing was broadcast, so the same payload may be retried: docs/api.md §2.7
 * `safe_to_retry_same_payload`) or held until the authorization expires (a settlement landed, is pending, or
 * its outcome is unknown). The facilitator refusing used nonces on chain remains the durable defence.
 */
import { holdUntil, type ReplayRefusal } from '../../core/replay.ts';
import type { ReplayGuard } from './port.ts';

/** Creates the in-memory guard; `now` is the injected clock. */
export function createReplayGuard(now: () => Date): ReplayGuard & {
  size(): { inFlight: number; held: number };
} {
  const inFlight = new Set<string>();
  const held = new Map<string, { until: number; reason: ReplayRefusal }>();
  const seconds = () => Math.floor(now().getTime() / 1000);

  function prune(at: number): void {
    for (const [key, entry] of held) if (entry.until <= at) held.delete(key);
  }

  /** Synchronous: concurrent requests race on one event-loop turn and exactly one wins. */
  function claimNow(key: string): ReplayRefusal | null {
    if (inFlight.has(key)) return 'payment_in_flight';
    const at = seconds();
    prune(at);
    const entry = held.get(key);
    if (entry) return entry.reason;
    inFlight.add(key);
    return null;
  }

  return {
    claim: (key) => Promise.resolve(claimNow(key)),
    async release(key, hold) {
      inFlight.delete(key);
      if (!hold) return;
      const at = seconds();
      const until = holdUntil(at, hold);
      if (until > at) held.set(key, { until, reason: hold.reason });
    },
    /** Counts, for tests and metrics. */
    size: () => ({ inFlight: inFlight.size, held: held.size }),
  };
}
