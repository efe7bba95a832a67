/**
 * The watcher (docs/api.md "Watches"): the probes of watched endpoints (`api/watch-probes.ts`) and the webhook
 * outbox (`api/watch-delivery.ts`), run in the background every `tickMs` on every instance; the store's leases
 * decide which instance does what. Clock, prober (in `check`), poster and jitter are injected.
 */
import type { HttpMethod } from '../core/model.ts';
import type { WebhookPoster } from '../io/probe/webhook-post.ts';
import { createWatchDeliverer, DELIVERY_BATCH } from './watch-delivery.ts';
import { createWatchProber, PROBE_BATCH, type WatcherDeps } from './watch-probes.ts';

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

/**
 * Creates the watcher; `tickMs` is the pause between two passes (default a quarter of the interval, ≤ 1 s). Probes
 * and deliveries run in two loops of their own, so a webhook never waits behind a pass of probes; a loop whose pass
 * found a full batch goes on at once (a backlog is worked at the speed of the store and the hosts, not one batch a
 * tick), and the delivery loop is woken as soon as a probe acknowledged events into the outbox.
 */
export function createWatcher(deps: WatcherDeps & { poster: WebhookPoster; tickMs?: number }): Watcher {
  const tickMs = deps.tickMs ?? Math.min(1000, (deps.intervalSeconds * 1000) / 4);
  const deliveries = createWatchDeliverer({ ...deps, now: deps.check.now });
  const deliveryLoop = createLoop(() => deliveries.deliverDue(), DELIVERY_BATCH, tickMs, deps.log);
  const probes = createWatchProber({
    ...deps,
    recorded: () => {
      deps.recorded?.();
      deliveryLoop.wake();
    },
  });
  const probeLoop = createLoop(() => probes.probeDue(), PROBE_BATCH, tickMs, deps.log);
  return {
    probeDue: () => probes.probeDue(),
    deliverDue: () => deliveries.deliverDue(),
    delisted: async (url, method, after) => {
      await probes.delisted(url, method, after);
      deliveryLoop.wake();
    },
    start() {
      probeLoop.start();
      deliveryLoop.start();
    },
    async stop() {
      await Promise.all([probeLoop.stop(), deliveryLoop.stop()]);
    },
  };
}

/** One background loop: `pass` every `tickMs`, at once again after a full batch, or when woken. */
type Loop = { start(): void; stop(): Promise<void>; wake(): void };

function createLoop(
  pass: () => Promise<number>,
  batch: number,
  tickMs: number,
  log: (line: string) => void,
): Loop {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = true;
  let woken = false;
  const once = async () => {
    let full = false;
    try {
      full = (await pass()) >= batch;
    } catch (error) {
      log(`pass failed: ${String(error)}`);
    }
    running = null;
    const again = full || woken;
    woken = false;
    schedule(again ? 0 : tickMs);
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      running = once();
    }, delayMs);
    timer.unref();
  };
  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(tickMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
    wake() {
      if (stopped) return;
      if (running) woken = true;
      else schedule(0);
    },
  };
}
