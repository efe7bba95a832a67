/**
 * The webhook outbox's worker (docs/api.md "Watches"): each due delivery is leased by one instance, signed for
 * this attempt (Standard Webhooks headers, `core/webhook-signature.ts`; the `webhook-id` is the event's id on every
 * attempt) and posted through the SSRF gate (`io/probe/webhook-post.ts`), at most
 * `WATCH_LIMITS.deliveriesPerReceiver` in flight per receiver host. A 2xx delivers; `410 Gone` stops the watch at
 * once; anything else is tried again with backoff and jitter (`core/watch-backoff.ts`) for 24 hours, then the watch
 * is paused. Either way a notice event is recorded for the poll route.
 */
import { WATCH_LIMITS } from '../core/limits.ts';
import { nextRetry } from '../core/watch-backoff.ts';
import type { WatchNoticeType } from '../core/watch-events.ts';
import { webhookHeaders } from '../core/webhook-signature.ts';
import type { WebhookPoster } from '../io/probe/webhook-post.ts';
import type { Delivery, WatchStore } from '../io/watches/port.ts';
import { addressedEvent, type EventSigning } from './watch-events.ts';
import { createHostLimiter, type HostLimiter } from './watch-hosts.ts';

/** What the worker needs. */
export type DeliveryDeps = EventSigning & {
  store: WatchStore;
  poster: WebhookPoster;
  now: () => Date;
  jitter: () => number;
  log: (line: string) => void;
};

/** The outbox worker. */
export type WatchDeliverer = {
  /** One pass: leases the deliveries due now and attempts each; resolves with the number attempted. */
  deliverDue(): Promise<number>;
};

/**
 * A delivery's lease, and the most one attempt may take (`io/probe/webhook-post.ts`'s bound, with a margin): one
 * whose turn comes (behind its receiver's other deliveries) with less lease left is given back unattempted, so an
 * attempt is made by one instance only, and a dead instance's deliveries are taken by another within the lease.
 */
const LEASE_MS = 30_000;
const ATTEMPT_TAKES_MS = 12_000;
/** Deliveries leased at once by one pass (the loop goes on at once after a full one: `api/watcher.ts`). */
export const DELIVERY_BATCH = 500;

/**
 * Creates the worker. A pass reads the watches of all its deliveries at once, holds a receiver's slot only for the
 * signing and the POST (the outcome is written after the slot is free), and gives up at once the deliveries of a
 * watch that an answer of this pass stopped or paused.
 */
export function createWatchDeliverer(deps: DeliveryDeps): WatchDeliverer {
  const limiter = createHostLimiter(WATCH_LIMITS.deliveriesPerReceiver);
  return {
    async deliverDue() {
      const due = await deps.store.claimDeliveries(deps.now().getTime(), LEASE_MS, DELIVERY_BATCH);
      const ended = new Set<string>();
      await Promise.all(
        due.map((d) =>
          attempt(deps, d, limiter, ended).catch((error: unknown) =>
            deps.log(`delivery ${d.eventId} failed: ${String(error)}`),
          ),
        ),
      );
      return due.length;
    },
  };
}

function receiverOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url;
}

/** One attempt of one delivery, and what its outcome does to the delivery and its watch. */
async function attempt(
  deps: DeliveryDeps,
  delivery: Delivery,
  limiter: HostLimiter,
  ended: Set<string>,
): Promise<void> {
  const watch = await deps.store.watch(delivery.watchId);
  if (watch === null || watch.status !== 'active') {
    await deps.store.giveUp(delivery.eventId, 'watch_not_active');
    return;
  }
  const result = await limiter.run(receiverOf(delivery.webhookUrl), async () => {
    if (ended.has(delivery.watchId)) return 'ended';
    if (deps.now().getTime() + ATTEMPT_TAKES_MS > delivery.leaseUntil) return 'late';
    const timestamp = Math.floor(deps.now().getTime() / 1000);
    const headers = webhookHeaders(delivery.eventId, timestamp, delivery.body, deps.signer());
    return deps.poster.post(delivery.webhookUrl, headers, delivery.body);
  });
  if (result === 'ended') return deps.store.giveUp(delivery.eventId, 'watch_not_active');
  if (result === 'late') return deps.store.releaseDelivery(delivery.eventId, delivery.leaseUntil);
  if (result.kind === 'status' && result.status >= 200 && result.status < 300) {
    await deps.store.delivered(delivery.eventId);
    return;
  }
  const why = result.kind === 'status' ? `status_${result.status}` : result.detail;
  if (result.kind === 'status' && result.status === 410) {
    ended.add(delivery.watchId);
    await deps.store.giveUp(delivery.eventId, why);
    await stopWatch(deps, delivery.watchId, 'stopped', why);
    return;
  }
  const nowMs = deps.now().getTime();
  const step = nextRetry(delivery.attempts + 1, delivery.firstDueMs, nowMs, deps.jitter);
  if (step.kind === 'retry') {
    await deps.store.retryAt(delivery.eventId, delivery.attempts + 1, step.atMs, why);
    return;
  }
  ended.add(delivery.watchId);
  await deps.store.giveUp(delivery.eventId, why);
  await stopWatch(deps, delivery.watchId, 'paused', why);
}

/** Pauses or stops a watch and records the notice that says why (never sent: its receiver is the problem). */
async function stopWatch(
  deps: DeliveryDeps,
  watchId: string,
  status: 'paused' | 'stopped',
  why: string,
): Promise<void> {
  const watch = await deps.store.watch(watchId);
  if (watch === null || watch.status !== 'active') return;
  const at = deps.now();
  await deps.store.setStatus(watchId, status, at.getTime());
  const event: WatchNoticeType = status === 'paused' ? 'watch_paused' : 'watch_stopped';
  const notice = addressedEvent(deps, watch, { event, receiptId: null, before: null, after: { why } }, at);
  await deps.store.record([{ ...notice, webhookUrl: null }], at.getTime());
}
