/**
 * The watcher's probes (docs/api.md "Watches"): every endpoint with an active watch is probed when due (the interval,
 * jittered), by one instance (the store's lease), at most `WATCH_LIMITS.probesPerHost` in flight per host. One
 * probe serves every watch of the endpoint: each set of expectations among the watches assembles its check from
 * that same fresh probe (`onePass`). An unchanged verdict and terms write
 * nothing but the endpoint's last-seen time; a change writes a signed receipt (the check's own, through the
 * ledger) and the events it gives (`core/watch-events.ts`), recorded with their deliveries before the schedule
 * moves on. The outbox is worked by `api/watch-delivery.ts`.
 */
import { WATCH_LIMITS } from '../core/limits.ts';
import type { HttpMethod, ProbeOutcome } from '../core/model.ts';
import { nextProbeAt } from '../core/watch-backoff.ts';
import {
  deriveWatchStep,
  isFailedReason,
  type WatchObservation,
  type WatchState,
  type WatchTerms,
} from '../core/watch-events.ts';
import type { OptOutSource } from '../io/opt-out.ts';
import type { ProbeCache } from '../io/probe/probe-cache.ts';
import { PROBE_BUDGET_MS } from '../io/probe/prober.ts';
import { hostOf } from '../io/store/port.ts';
import type { DueEndpoint, NewEvent, WatchRow, WatchStore } from '../io/watches/port.ts';
import { type CheckDeps, type CheckDraft, draftCheck } from './check.ts';
import type { CheckParams } from './params.ts';
import { addressedEvent, type EventSigning } from './watch-events.ts';
import { createHostLimiter } from './watch-hosts.ts';
import { createOptOutGate, endpointOptedOut, optOutEndpoint } from './watch-opt-out.ts';

/** What the watcher needs: the store, the check's own dependencies, the signing of events, the interval. */
export type WatcherDeps = EventSigning & {
  store: WatchStore;
  check: CheckDeps;
  intervalSeconds: number;
  /** Uniform in [0, 1): jitter of due times and of retries. */
  jitter: () => number;
  log: (line: string) => void;
  /** Called once a probe's events are in the outbox (the watcher wakes its deliveries). */
  recorded?: () => void;
  /** The host opt-out list (`io/opt-out.ts`); none given, none applies. */
  optOut?: OptOutSource;
  /** A probe's lease (`WATCH_LEASE_MS`); default {@link PROBE_LEASE_MS}. */
  leaseMs?: number;
};

/** The probing half of the watcher. */
export type WatchProber = {
  /** One pass: leases what is due now and probes it; resolves with the number of endpoints probed. */
  probeDue(): Promise<number>;
  /**
   * The crawl's hook: `delisted` for every active watch of an endpoint no listing source names any more; `after`
   * says which run found it gone (its id, the source that listed it, when).
   */
  delisted(url: string, method: HttpMethod, after?: Record<string, unknown>): Promise<void>;
};

/**
 * How long a probe's lease lasts, and the most one probe may take (the probe's whole budget plus its wait for an
 * address, `io/probe/prober.ts`): an endpoint whose turn comes (behind its host's other probes) with less lease
 * left than that is given back unprobed, and a probe that outlived its lease writes nothing (`finishProbe`), so
 * two instances never both tell a watch of one change. The lease is short so that the endpoints of an instance
 * that died are probed by another within one interval (any interval of at least `LEASE_MS`; docs/deploy.md).
 */
export const PROBE_LEASE_MS = 15_000;
const PROBE_TAKES_MS = 2 * PROBE_BUDGET_MS;

/**
 * The most a probe may take within a lease of `leaseMs`: the probe's bound, or two thirds of a shorter lease (tests
 * run with short leases; a probe slower than that is given back, or dropped by `finishProbe`, and tried again).
 */
function probeTakesMs(leaseMs: number): number {
  return Math.min(PROBE_TAKES_MS, Math.floor((leaseMs * 2) / 3));
}

/** Endpoints leased at once by one pass (the loop goes on at once after a full one: `api/watcher.ts`). */
export const PROBE_BATCH = 500;

/** Creates the probing half of the watcher. */
export function createWatchProber(deps: WatcherDeps): WatchProber {
  const limiter = createHostLimiter(WATCH_LIMITS.probesPerHost);
  const optOutList = createOptOutGate(deps.optOut, deps.log);
  const leaseMs = deps.leaseMs ?? PROBE_LEASE_MS;
  const takesMs = probeTakesMs(leaseMs);
  return {
    async probeDue() {
      const optOut = await optOutList();
      if (optOut === null) return 0;
      const due = await deps.store.claimDue(deps.check.now().getTime(), leaseMs, PROBE_BATCH);
      await Promise.all(
        due.map((endpoint) =>
          (endpointOptedOut(endpoint.url, optOut)
            ? optOutEndpoint(deps, endpoint)
            : limiter.run(hostOf(endpoint.url) ?? endpoint.url, async () => {
                if (deps.check.now().getTime() + takesMs > endpoint.leaseUntil) {
                  await deps.store.releaseProbe(endpoint);
                  return;
                }
                await probeEndpoint(deps, endpoint);
              })
          ).catch((error: unknown) => deps.log(`probe of ${endpoint.url} failed: ${String(error)}`)),
        ),
      );
      return due.length;
    },
    async delisted(url, method, after) {
      const at = deps.check.now();
      const watches = await deps.store.activeWatchesOf(url, method, at.getTime());
      const events = watches.map((w) =>
        addressedEvent(
          deps,
          w,
          { event: 'delisted', receiptId: null, before: null, after: after ?? null },
          at,
        ),
      );
      await deps.store.record(events, at.getTime());
    },
  };
}

/** The key of a set of expectations: watches with the same one share a check and a state. */
function expectationKey(w: Pick<WatchRow, 'payTo' | 'network' | 'claimedPrice'>): string {
  return JSON.stringify([w.payTo?.toLowerCase() ?? null, w.network, w.claimedPrice]);
}

/** Probes one leased endpoint for every set of expectations of its watches; records events; reschedules it. */
async function probeEndpoint(deps: WatcherDeps, endpoint: DueEndpoint): Promise<void> {
  const at = deps.check.now();
  const watches = await deps.store.activeWatchesOf(endpoint.url, endpoint.method, at.getTime());
  const groups = new Map<string, WatchRow[]>();
  for (const w of watches) groups.set(expectationKey(w), [...(groups.get(expectationKey(w)) ?? []), w]);
  const states: Record<string, WatchState> = {};
  const events: NewEvent[] = [];
  const check = { ...deps.check, probeCache: onePass(deps.check.probeCache.ttlSeconds) };
  for (const [key, members] of groups) {
    const { state, made } = await observeGroup({ ...deps, check }, members, endpoint.states[key] ?? null, at);
    states[key] = state;
    events.push(...made);
  }
  events.push(...expiringEvents(deps, watches, at));
  // Acknowledged into the outbox in the transaction that moves the schedule on, under this probe's lease: a kill
  // before it probes again, never loses one; a lease that ran out (another instance took the endpoint) writes none.
  const nextDueMs = nextProbeAt(deps.check.now().getTime(), deps.intervalSeconds, deps.jitter);
  const held = await deps.store.finishProbe(endpoint, { states, nextDueMs, events, nowMs: at.getTime() });
  if (!held) deps.log(`probe of ${endpoint.url} outlived its lease: its result is dropped`);
  else if (events.length > 0) deps.recorded?.();
}

/** One check for watches sharing expectations: the next state, and their events (a receipt when it changed). */
async function observeGroup(
  deps: WatcherDeps,
  members: WatchRow[],
  previous: WatchState | null,
  at: Date,
): Promise<{ state: WatchState; made: NewEvent[] }> {
  const first = members[0] as WatchRow;
  const draft = await draftCheck(deps.check, paramsOf(first), 'dry-run');
  const seen = observationOf(draft);
  const step = deriveWatchStep(previous, seen, at.toISOString(), WATCH_LIMITS.downAfter);
  if (!step.changed) return { state: step.state, made: [] };
  // The service's own probe, unmetered: its receipt reads as an exempt check.
  const receipt = await draft.issue({ tier: 'exempt' }, null);
  const state = seen.failed ? step.state : { ...step.state, receiptId: receipt.id };
  const made = members.flatMap((w) =>
    step.events.map((e) => addressedEvent(deps, w, { ...e, receiptId: receipt.id }, at)),
  );
  return { state, made };
}

/** `watch_expiring` for each watch within the notice period that has not had it. */
function expiringEvents(deps: WatcherDeps, watches: WatchRow[], at: Date): NewEvent[] {
  const notice = WATCH_LIMITS.expiringNoticeHours * 3600 * 1000;
  return watches
    .filter((w) => !w.expiringSent && w.expiresAtMs - at.getTime() <= notice)
    .map((w) =>
      addressedEvent(
        deps,
        w,
        {
          event: 'watch_expiring',
          receiptId: null,
          before: null,
          after: { expires_at: new Date(w.expiresAtMs).toISOString() },
        },
        at,
      ),
    );
}

/**
 * The probe cache of one pass over one endpoint: the first check probes, every other set of expectations reads that
 * same outcome. Not the live check's cache: its reuse window (300 s) would hide a change for up to that long from a
 * watch whose interval is shorter than it or whose endpoint a live check probed just before (docs/decisions.md
 * "Watches").
 */
function onePass(ttlSeconds: number): ProbeCache {
  const runs = new Map<string, Promise<ProbeOutcome>>();
  return {
    async get(key, run) {
      const known = runs.get(key);
      if (known) return { outcome: await known, cached: true };
      const started = run();
      runs.set(key, started);
      return { outcome: await started, cached: false };
    },
    ttlSeconds,
    get size() {
      return runs.size;
    },
    chars: 0,
  };
}

/** The check a watch asks for: live, its expectations, nothing else. */
function paramsOf(w: WatchRow): CheckParams {
  return {
    url: w.url,
    urlNorm: w.urlNorm,
    method: w.method,
    task: null,
    claimedPrice: w.claimedPrice,
    payTo: w.payTo,
    network: w.network,
    client: null,
    ref: null,
    mode: 'live',
    checkExpiry: false,
    skewS: 30,
    sent: null,
  };
}

/** What the watcher reads from an assembled check. */
function observationOf(draft: CheckDraft): WatchObservation {
  const full = draft.full;
  const payment = full.payment as { amount?: { atomic?: string } } | null;
  const terms: WatchTerms | null =
    full.pay_to === null && full.network === null && payment === null
      ? null
      : {
          amount_atomic: payment?.amount?.atomic ?? null,
          pay_to: full.pay_to,
          network: full.network,
          asset: full.asset,
        };
  return {
    verdict: full.verdict,
    reason: full.reason,
    terms,
    failed: isFailedReason(full.reason),
    receiptId: null,
  };
}
