/**
 * What a watch reports (docs/api.md "Watches"): the events a change between two observations of one endpoint
 * gives, as a pure function of the endpoint's last known state and the new observation. Pure: the watcher
 * (`api/watcher.ts`) probes, signs and stores; this decides.
 */

/** Events a watch may subscribe to (`events` of `POST /v1/watches`); all of them by default. */
export const WATCH_EVENT_TYPES = [
  'verdict_changed',
  'terms_changed',
  'down',
  'recovered',
  'delisted',
  'watch_expiring',
] as const;

/** A subscribable event. */
export type WatchEventType = (typeof WATCH_EVENT_TYPES)[number];

/**
 * Events about the watch itself, recorded for the poll route only: `watch_paused` and `watch_stopped` are never
 * sent to the receiver that failed; `watch_opted_out` says its host asked not to be probed (the watch stops with it).
 */
export type WatchNoticeType = 'watch_paused' | 'watch_stopped' | 'watch_opted_out';

/** The payment terms an observation read (null members where the 402 named none). */
export type WatchTerms = {
  amount_atomic: string | null;
  pay_to: string | null;
  network: string | null;
  asset: string | null;
};

/** What one probe of the endpoint showed, as the watcher reads it from the check it assembled. */
export type WatchObservation = {
  verdict: string;
  reason: string;
  /** Null when no payment terms were read (no 402, a bad challenge, a failure). */
  terms: WatchTerms | null;
  /** The probe failed: no answer, a timeout or a server error (reasons `unreachable`, `timeout`, `server_error`). */
  failed: boolean;
  /** The receipt this observation is on (null until issued). */
  receiptId: string | null;
};

/** The endpoint's state between probes, kept per set of expectations (JSON in the watch store). */
export type WatchState = {
  verdict: string;
  reason: string;
  terms: WatchTerms | null;
  /** Consecutive failed probes. */
  failures: number;
  /** A `down` event was sent and no `recovered` since. */
  down: boolean;
  /** The receipt of the newest change (the receipt every later unchanged probe only confirms). */
  receiptId: string | null;
  /** When the state was first seen and when it was last confirmed (ISO 8601). */
  since: string;
  lastSeen: string;
};

/** One event as derived, before it is addressed to watches and signed. */
export type DerivedEvent = {
  event: WatchEventType;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};

/** What an observation does to the state: the next state, the events, and whether a receipt must be written. */
export type WatchStep = { state: WatchState; events: DerivedEvent[]; changed: boolean };

/** The reasons that mean the endpoint did not answer usably (docs/api.md §7). */
const FAILED_REASONS: ReadonlySet<string> = new Set(['unreachable', 'timeout', 'server_error']);

/** True when a check's reason means the probe failed. */
export function isFailedReason(reason: string): boolean {
  return FAILED_REASONS.has(reason);
}

/**
 * The next state and the events one observation gives. A failed probe never changes the terms or the verdict
 * kept: only `downAfter` consecutive failures give `down` (once), and the first success after it `recovered`. A
 * first observation (no previous state) is the baseline: it is recorded with a receipt and gives no event.
 * @example deriveWatchStep(prev, { verdict: 'skip', reason: 'pay_to_mismatch', terms, failed: false, receiptId: null }, at, 3)
 */
export function deriveWatchStep(
  previous: WatchState | null,
  seen: WatchObservation,
  at: string,
  downAfter: number,
): WatchStep {
  if (previous === null) {
    const failures = seen.failed ? 1 : 0;
    return {
      state: { ...stateOf(seen, at), failures, down: seen.failed && failures >= downAfter },
      events: [],
      changed: true,
    };
  }
  if (seen.failed) return failedStep(previous, seen, at, downAfter);
  const events: DerivedEvent[] = [];
  if (previous.down) {
    events.push({ event: 'recovered', before: { failures: previous.failures }, after: verdictOf(seen) });
  }
  const termsChanged = !sameWatchTerms(previous.terms, seen.terms);
  const verdictChanged = previous.verdict !== seen.verdict || previous.reason !== seen.reason;
  if (termsChanged) events.push({ event: 'terms_changed', before: previous.terms, after: seen.terms });
  if (verdictChanged) {
    events.push({ event: 'verdict_changed', before: verdictOf(previous), after: verdictOf(seen) });
  }
  const changed = termsChanged || verdictChanged || previous.down;
  if (!changed) return { state: { ...previous, failures: 0, lastSeen: at }, events, changed: false };
  return { state: stateOf(seen, at), events, changed: true };
}

/** A failed probe: counted; `down` once the count reaches `downAfter`. */
function failedStep(previous: WatchState, seen: WatchObservation, at: string, downAfter: number): WatchStep {
  const failures = previous.failures + 1;
  if (previous.down || failures < downAfter) {
    return { state: { ...previous, failures, lastSeen: at }, events: [], changed: false };
  }
  return {
    state: { ...previous, failures, down: true, lastSeen: at },
    events: [{ event: 'down', before: verdictOf(previous), after: { ...verdictOf(seen), failures } }],
    changed: true,
  };
}

function stateOf(seen: WatchObservation, at: string): WatchState {
  return {
    verdict: seen.verdict,
    reason: seen.reason,
    terms: seen.terms,
    failures: 0,
    down: false,
    receiptId: seen.receiptId,
    since: at,
    lastSeen: at,
  };
}

function verdictOf(s: { verdict: string; reason: string }): Record<string, unknown> {
  return { verdict: s.verdict, reason: s.reason };
}

/** Terms compare member by member; wallets case-insensitively (an EVM address's checksum case is not a change). */
export function sameWatchTerms(a: WatchTerms | null, b: WatchTerms | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.amount_atomic === b.amount_atomic &&
    a.network === b.network &&
    (a.asset ?? '').toLowerCase() === (b.asset ?? '').toLowerCase() &&
    (a.pay_to ?? '').toLowerCase() === (b.pay_to ?? '').toLowerCase()
  );
}
