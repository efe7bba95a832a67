/**
 * The watcher (docs/api.md "Watches"): the probes of watched endpoints (`api/watch-probes.ts`) and the webhook
 * outbox (`api/watch-delivery.ts`), run in the background every `tickMs` on every instance; the store's leases
 * decide which instance does what. Clock, prober (in `check`), poster and jitter are injected.
 */
import type { HttpMethod } from '../core/model.ts';
import type { WebhookPoster } from '../io/probe/webhook-post.ts';
import { createWatchDeliverer } from './watch-delivery.ts';
import { createWatchProber, type WatcherDeps } from './watch-probes.ts';

/** The running watcher. */
export type Watcher = {
  /** One pass of probes (tests; the loop runs it). */
  probeDue(): Promise<number>;
  /** One pass of deliveries (tests; the loop runs it). */
  deliverDue(): Promise<number>;
  /** The crawl's hook for an endpoint no listing source names any more (`after`: which run found it gone). */
  delisted(url: string, method: HttpMethod, after?: Record<string, unknown>): Promise<void>;
  /** Starts the background loop. */
  start(): void;
  /** Stops it, once the pass running now has finished. */
  stop(): Promise<void>;
};

/** Creates the watcher; `tickMs` is the pause between two passes (default a quarter of the interval, ≤ 1 s). */
export function createWatcher(deps: WatcherDeps & { poster: WebhookPoster; tickMs?: number }): Watcher {
  const probes = createWatchProber(deps);
  const deliveries = createWatchDeliverer({ ...deps, now: deps.check.now });
  const tickMs = deps.tickMs ?? Math.min(1000, (deps.intervalSeconds * 1000) / 4);
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = true;
  const pass = async () => {
    try {
      await probes.probeDue();
      await deliveries.deliverDue();
    } catch (error) {
      deps.log(`pass failed: ${String(error)}`);
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().then(schedule);
    }, tickMs);
    timer.unref();
  };
  return {
    probeDue: () => probes.probeDue(),
    deliverDue: () => deliveries.deliverDue(),
    delisted: (url, method, after) => probes.delisted(url, method, after),
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
