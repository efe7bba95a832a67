/**
 * One exchange of a probe with checked addresses (`io/probe/prober.ts` gates them): the request it sends, the slot of the
 * address it waits for, and the budget that pauses while it waits. Internal to the prober.
 */
import type { HttpMethod } from '../../core/model.ts';
import { literalAddress } from '../../core/ssrf.ts';
import {
  type Connect,
  type ConnectTarget,
  exchange,
  isConnectFailure,
  type RawExchange,
  type Stage,
  StaleConnectionError,
} from './_http.ts';
import { type AddressSlots, type ReleaseSlot, serverKey } from './address-slots.ts';

/** Redirect statuses the prober follows (when they carry a `location`). */
export const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** What every exchange of one prober shares: its options, resolved, and its slots and running budgets. */
export type ExchangeContext = {
  readonly maxBodyBytes: number;
  readonly maxHeaderSize: number;
  readonly userAgent: string;
  readonly connect: Connect;
  readonly reuseConnections: boolean;
  readonly slots: AddressSlots;
  readonly addressQueueMs: number;
  /** The budget of each probe running, by its signal: queueing for a slot pauses it. */
  readonly budgets: WeakMap<AbortSignal, TimeBudget>;
};

/** One probe in flight: its signal, the stage a timeout is named after, and the body of a POST. */
export type ProbeRun = { readonly signal: AbortSignal; readonly stage: Stage; readonly postBody: string };

/** One exchange with the first checked address; the next one only if the connection itself failed. */
export async function sendToAddresses(
  ctx: ExchangeContext,
  run: ProbeRun,
  url: URL,
  method: HttpMethod,
  addresses: string[],
): Promise<RawExchange> {
  // A POST is not idempotent, so it never rides a pooled connection that could fail under it.
  let reuse = ctx.reuseConnections && method === 'GET';
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  for (let i = 0; ; ) {
    const target = connectTarget(ctx, run, url, method, { address: addresses[i]!, port, reuse });
    const release = await takeSlot(ctx, run, serverKey(target.address, port));
    try {
      return await exchange(ctx.connect, target, method === 'POST' ? run.postBody : null, {
        signal: run.signal,
        maxBodyBytes: ctx.maxBodyBytes,
        stage: run.stage,
        skipBody: (status, h) => REDIRECTS.has(status) && h['location'] !== undefined,
      });
    } catch (err) {
      if (run.signal.aborted) throw err;
      // The seller closed the pooled connection as the GET went out: once more, on a new one.
      if (err instanceof StaleConnectionError) {
        reuse = false;
        continue;
      }
      if (i + 1 >= addresses.length || !isConnectFailure(err)) throw err;
      i++;
    } finally {
      release();
    }
  }
}

/** Where and what one exchange sends: the checked address, with SNI and `Host` from the URL. */
function connectTarget(
  ctx: ExchangeContext,
  run: ProbeRun,
  url: URL,
  method: HttpMethod,
  to: { address: string; port: number; reuse: boolean },
): ConnectTarget {
  const headers: Record<string, string> = {
    host: url.host,
    accept: 'application/json',
    'user-agent': ctx.userAgent,
  };
  // docs/api.md §4: `method=POST` probes with an empty JSON body (a crawl: the listing's example body, docs/api.md §2.10).
  if (method === 'POST')
    Object.assign(headers, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(run.postBody)),
    });
  return {
    protocol: url.protocol === 'https:' ? 'https:' : 'http:',
    address: to.address,
    family: to.address.includes(':') ? 6 : 4,
    port: to.port,
    servername: literalAddress(url) === null ? url.hostname.replace(/\.$/, '') : null,
    method,
    path: `${url.pathname}${url.search}`,
    headers: to.reuse ? headers : { ...headers, connection: 'close' },
    maxHeaderSize: ctx.maxHeaderSize,
    reuse: to.reuse,
  };
}

/**
 * A slot of the address: at once when it has one free; else the probe's budget pauses while it queues, for at
 * most `addressQueueMs` (then the probe ends as `timeout_queue`, nothing sent).
 */
async function takeSlot(ctx: ExchangeContext, run: ProbeRun, key: string): Promise<ReleaseSlot> {
  const free = ctx.slots.tryTake(key);
  if (free !== null) return free;
  const budget = ctx.budgets.get(run.signal);
  const queued = new AbortController();
  // No timer for an unbounded wait (a delay past 2^31 - 1 ms would fire at once).
  const timer = Number.isFinite(ctx.addressQueueMs)
    ? setTimeout(() => queued.abort(new Error('address queue wait exceeded')), ctx.addressQueueMs)
    : undefined;
  run.stage.name = 'queue';
  budget?.pause();
  try {
    return await ctx.slots.take(key, queued.signal);
  } catch (err) {
    budget?.expire(err);
    throw err;
  } finally {
    clearTimeout(timer);
    budget?.resume();
  }
}

/**
 * The budget of one probe: its signal aborts once `ms` have run, not counting the time paused (queued for an
 * address slot). One timer while it runs, none while paused.
 */
export type TimeBudget = {
  signal: AbortSignal;
  pause(): void;
  resume(): void;
  /** Ends the probe now (its queue wait ran out). */
  expire(reason: unknown): void;
  clear(): void;
};

/** Creates the budget of one probe, running from now. */
export function createTimeBudget(ms: number): TimeBudget {
  const controller = new AbortController();
  let left = ms;
  let since = performance.now();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const clear = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  const expire = (reason: unknown) => {
    clear();
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const arm = () => {
    since = performance.now();
    timer = setTimeout(() => expire(new Error('probe budget exceeded')), Math.max(0, left));
  };
  arm();
  return {
    signal: controller.signal,
    pause() {
      if (timer === null) return;
      clear();
      left -= performance.now() - since;
    },
    resume() {
      if (timer === null && !controller.signal.aborted) arm();
    },
    expire,
    clear,
  };
}
