/**
 * The watches and the host opt-out list (docs/decisions.md "Politeness", `core/opt-out.ts`): the watcher sends no
 * request to a listed host. A leased endpoint whose host is listed is not probed; each of its active watches gets a
 * signed `watch_opted_out` notice on the poll route and the status `opted_out` (no longer probed, billed or
 * delivering), in the one transaction that ends the lease. A pass whose list cannot be read probes nothing: probing
 * a host that asked not to be is worse than a late probe.
 */
import { isOptedOut, type OptOutList } from '../core/opt-out.ts';
import { nextProbeAt } from '../core/watch-backoff.ts';
import type { OptOutSource } from '../io/opt-out.ts';
import { hostOf } from '../io/store/port.ts';
import type { DueEndpoint, WatchStore } from '../io/watches/port.ts';
import { addressedEvent, type EventSigning } from './watch-events.ts';

/** What ending an opted-out endpoint's lease needs (a part of the watcher's dependencies). */
export type OptOutDeps = EventSigning & {
  store: WatchStore;
  check: { now: () => Date };
  intervalSeconds: number;
  jitter: () => number;
  log: (line: string) => void;
};

/**
 * The list a probe pass goes by, or null when the files cannot be read now (the pass then probes nothing; the
 * reason is logged once per distinct reason).
 */
export function createOptOutGate(source: OptOutSource | undefined, log: (line: string) => void) {
  let lastError: string | null = null;
  return async (): Promise<OptOutList | null> => {
    if (!source) return new Set();
    const reading = await source.read();
    if (reading.error !== null && reading.error !== lastError) {
      log(`the opt-out list cannot be read, no watch is probed until it can: ${reading.error}`);
    }
    lastError = reading.error;
    return reading.error === null ? reading.list : null;
  };
}

/** Whether the host of a watched URL is on `list`. */
export function endpointOptedOut(url: string, list: OptOutList): boolean {
  const host = hostOf(url);
  return host !== null && isOptedOut(host, list);
}

/** Ends the lease of an endpoint whose host opted out, unprobed: a notice per active watch, each one `opted_out`. */
export async function optOutEndpoint(deps: OptOutDeps, endpoint: DueEndpoint): Promise<void> {
  const at = deps.check.now();
  const watches = await deps.store.activeWatchesOf(endpoint.url, endpoint.method, at.getTime());
  const host = hostOf(endpoint.url);
  const events = watches.map((w) => ({
    ...addressedEvent(
      deps,
      w,
      { event: 'watch_opted_out', receiptId: null, before: null, after: { host } },
      at,
    ),
    webhookUrl: null,
  }));
  const nextDueMs = nextProbeAt(at.getTime(), deps.intervalSeconds, deps.jitter);
  await deps.store.finishProbe(endpoint, {
    states: endpoint.states,
    nextDueMs,
    events,
    nowMs: at.getTime(),
  });
  deps.log(`${endpoint.url}: its host is on the opt-out list; ${watches.length} watch(es) opted out`);
}
