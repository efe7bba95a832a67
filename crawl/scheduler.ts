/**
 * The per-host scheduler of the crawl (docs/api.md §2.10, §8: at most 3 requests in flight per host), with a second limit
 * per registrable domain: wildcard DNS gives one operator any number of host names, and 3 per name is no limit at
 * all for its server (docs/decisions.md "The crawl"). A global concurrency bounds the whole run; within it, whenever
 * a slot frees, the host with the most work left (its remaining rounds of `perHost` requests, or its domain's of
 * `perDomain` when more, times its observed latency) starts next. So the slow, busy hosts that bound the wall time
 * are never starved by quick ones, and with enough global slots every host is kept busy.
 *
 * The run is also paced: a crawl is CPU-bound, and requests beyond what finishes the work by the busiest host's bound
 * only queue their answers behind the critical hosts' on every round, and hold memory while they wait. The
 * concurrency needed is the work left (Σ requests × latency) over that bound (Little's law; a host not measured yet
 * counts at the mean latency seen so far, or all alike before the first answer); past it, with {@link PACE_HEADROOM}
 * and at least one per host up to {@link PACE_FLOOR}, only hosts on the critical path start, and hosts not measured
 * yet their first request, within {@link EXPLORE_SLOTS} more. So a catalog where one host holds most of the listings
 * keeps that host's 3 slots busy and about a hundred requests on its thousands of small hosts, not one on each at
 * once. A fleet of equal hosts is never paced: every host is on the critical path.
 *
 * A job holds its host's slot only while it talks to the host: once `work` calls `released` (its requests are
 * answered), the host may take its next request while the job goes on (assembling, signing, journaling), and the
 * latency learned is the host's alone. Jobs past their requests are bounded by the global concurrency too, so a run
 * never holds more than twice that many.
 *
 * The host that bounds the run (the most time left) may have its next jobs prepared before its slots free
 * ({@link ScheduleOptions.prepare}): the crawl journals their start there, so a freed slot's next request leaves at
 * once instead of after a durable write (docs/decisions.md "The crawl": waiting for it under load left a 50 ms host's
 * slots idle 28 % of the time).
 */

/** One unit of work and the host it loads. */
export type HostJob<T> = { host: string; item: T };

export type ScheduleOptions<T = unknown> = {
  /** Most jobs talking to one host at once (spec: 3 requests in flight). */
  perHost: number;
  /** Most jobs talking to the hosts of one domain at once (default: no limit beyond `perHost`). */
  perDomain?: number;
  /** The domain of a host (the crawl: its registrable domain); by default each host is its own. */
  domainOf?: (host: string) => string;
  /** Most jobs talking to their hosts at once overall, and most jobs past their requests still running. */
  concurrency: number;
  /** A monotonic clock in milliseconds, to learn each host's latency. */
  now: () => number;
  /**
   * Most jobs started at once; the rest start on `defer`'s call, so the requests of a first burst leave as they are
   * made instead of after all of them are (default, or without `defer`: no limit).
   */
  burst?: number;
  /** Calls `run` later (the crawl: `setImmediate`), for {@link ScheduleOptions.burst}. */
  defer?: (run: () => void) => void;
  /** Calls `run` after `ms` (default `setTimeout`): the end of a host's pause ({@link Later}). */
  after?: (ms: number, run: () => void) => void;
  /**
   * Called, in queue order, for the next jobs of the host with the most time left as its jobs start, so what must
   * precede a job's request is done while the host's current requests are in flight. Every prepared item is started
   * next on its host, so a run that fails leaves at most `prepareAhead` prepared and not started. A job put back by
   * {@link Later} goes to the end of its host's queue and may be prepared a second time.
   */
  prepare?: (item: T) => void;
  /** Most items prepared and not started yet, over the whole run (default 0: nothing is prepared). */
  prepareAhead?: number;
};

/**
 * What `work` calls instead of finishing its item when the host asked to be left alone (`Retry-After`): the item
 * goes back to its host's queue, the host starts nothing until `ms` have passed, and the job's slot is freed.
 */
export type Later = (ms: number) => void;

/**
 * The pacing's margin: the paced limit is this factor times the concurrency Little's law asks for (uneven packing,
 * latencies that drift), and a host whose time left is within this factor of the longest is on the critical path.
 */
const PACE_HEADROOM = 1.2;

/**
 * The paced limit is never below one request per host with work left, up to this many: Little's law alone lets hosts
 * with time to spare slip until they join the critical path together near the end, and requests beyond it cost
 * little at this size. Not one per host beyond it: at 2,300 hosts that was the crawl's peak of memory.
 */
const PACE_FLOOR = 64;

/**
 * Past the paced limit, hosts not measured yet may start their first request within this many more: each must be
 * measured to know whether it bounds the run, but a catalog's thousands of small hosts are measured this many at a
 * time, not all at once.
 */
const EXPLORE_SLOTS = 64;

/** Jobs of a domain's hosts talking to them now, and not started yet. */
type DomainState = { inFlight: number; left: number };

/** `done` and `spentMs` count the jobs that released the host, and the time they held it. */
type HostState<T> = {
  queue: T[];
  next: number;
  /** Queue index up to which items were prepared ({@link ScheduleOptions.prepare}). */
  preparedTo: number;
  /** Monotonic time before which the host starts nothing (a `Retry-After` pause); 0 when not paused. */
  pausedUntil: number;
  inFlight: number;
  done: number;
  spentMs: number;
  domain: DomainState;
};

/**
 * Runs `work` once for every job under the limits and resolves when all are done. `work` gets `released`, to call
 * once its requests to the host are answered (the job's end releases the host otherwise). `work` should not throw
 * (the crawl turns every failure of a target into a verdict); if it does, nothing new starts and the first error
 * rejects once the jobs running have settled.
 * @example await runPerHost(jobs, (item, released) => probe(item, released), { perHost: 3, concurrency: 256, now: performance.now.bind(performance) })
 */
export function runPerHost<T>(
  jobs: Iterable<HostJob<T>>,
  work: (item: T, released: () => void, later: Later) => Promise<void>,
  options: ScheduleOptions<T>,
): Promise<void> {
  const hosts = groupByHost(jobs, options.domainOf ?? ((host: string) => host));
  return new Promise<void>((resolve, reject) => {
    const run: Run<T> = {
      work,
      options,
      perHost: Math.max(1, Math.floor(options.perHost)),
      perDomain: Math.max(1, Math.floor(options.perDomain ?? Number.POSITIVE_INFINITY)),
      concurrency: Math.max(1, Math.floor(options.concurrency)),
      burst: Math.max(1, Math.floor(options.burst ?? Number.POSITIVE_INFINITY)),
      prepareAhead: options.prepare ? Math.max(0, Math.floor(options.prepareAhead ?? 0)) : 0,
      prepared: 0,
      critical: null,
      open: hosts.filter((h) => h.queue.length > 0),
      openSeen: { done: 0, spentMs: 0 },
      inFlight: 0,
      trailing: 0,
      failure: null,
      deferred: false,
      resolve,
      reject,
    };
    dispatch(run);
    settleIfDone(run);
  });
}

/** The state of one {@link runPerHost} call, shared by the steps below. */
type Run<T> = {
  readonly work: (item: T, released: () => void, later: Later) => Promise<void>;
  readonly options: ScheduleOptions<T>;
  readonly perHost: number;
  readonly perDomain: number;
  readonly concurrency: number;
  readonly burst: number;
  readonly prepareAhead: number;
  /** Items prepared and not started yet. */
  prepared: number;
  /** The host with the most time left at the last pick: the one whose next jobs are prepared. */
  critical: HostState<T> | null;
  /** Hosts with jobs not started yet. */
  open: HostState<T>[];
  /** Probes done and time spent by the open hosts, kept as they change (the mean latency of every pick). */
  readonly openSeen: { done: number; spentMs: number };
  /** Jobs holding their host's slot. */
  inFlight: number;
  /** Jobs that released their host's slot and still run. */
  trailing: number;
  failure: { error: unknown } | null;
  /** Whether a dispatch waits on `defer`. */
  deferred: boolean;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
};

/** The jobs grouped by host, in order, each host tied to its domain's shared state. */
function groupByHost<T>(jobs: Iterable<HostJob<T>>, domainOf: (host: string) => string): HostState<T>[] {
  const hosts = new Map<string, HostState<T>>();
  const domains = new Map<string, DomainState>();
  for (const job of jobs) {
    let state = hosts.get(job.host);
    if (state === undefined) {
      const name = domainOf(job.host);
      let domain = domains.get(name);
      if (domain === undefined) {
        domain = { inFlight: 0, left: 0 };
        domains.set(name, domain);
      }
      state = { queue: [], next: 0, preparedTo: 0, pausedUntil: 0, inFlight: 0, done: 0, spentMs: 0, domain };
      hosts.set(job.host, state);
    }
    state.queue.push(job.item);
    state.domain.left++;
  }
  return [...hosts.values()];
}

/** Settles the run once nothing runs: with the first failure, or when no job is left to start. */
function settleIfDone<T>(run: Run<T>): void {
  if (run.inFlight > 0 || run.trailing > 0) return;
  if (run.failure !== null) run.reject(run.failure.error);
  else if (run.open.length === 0) run.resolve();
}

/** Starts the next job of `host`. */
function startJob<T>(run: Run<T>, host: HostState<T>): void {
  if (host.next < host.preparedTo) run.prepared--;
  const item = host.queue[host.next++] as T;
  if (host === run.critical) prepareNext(run, host);
  host.inFlight++;
  host.domain.inFlight++;
  host.domain.left--;
  run.inFlight++;
  const began = run.options.now();
  let holding = true;
  const release = () => {
    if (!holding) return;
    holding = false;
    run.trailing++;
    leaveHost(run, host, began);
  };
  const end = () => {
    release();
    run.trailing--;
    // Room under the bound of jobs past their requests: what it held back may start.
    if (run.trailing === run.concurrency - 1) dispatch(run);
    settleIfDone(run);
  };
  const later: Later = (ms) => {
    if (!holding) return;
    requeue(run, host, item, ms);
    release();
  };
  let running: Promise<void>;
  try {
    running = run.work(item, release, later);
  } catch (error) {
    running = Promise.reject(error);
  }
  running.then(end, (error: unknown) => {
    run.failure ??= { error };
    end();
  });
}

/** Prepares the host's next items in queue order, within {@link ScheduleOptions.prepareAhead} over the run. */
function prepareNext<T>(run: Run<T>, host: HostState<T>): void {
  const prepare = run.options.prepare;
  if (prepare === undefined) return;
  host.preparedTo = Math.max(host.preparedTo, host.next);
  while (run.prepared < run.prepareAhead && host.preparedTo < host.queue.length) {
    run.prepared++;
    prepare(host.queue[host.preparedTo++] as T);
  }
}

/**
 * Puts `item` back on its host's queue and pauses the host for `ms`; a host already drained is open again. The
 * pause ends on a timer that dispatches.
 */
function requeue<T>(run: Run<T>, host: HostState<T>, item: T, ms: number): void {
  const wasOpen = host.next < host.queue.length;
  host.queue.push(item);
  host.domain.left++;
  const until = run.options.now() + Math.max(0, ms);
  host.pausedUntil = Math.max(host.pausedUntil, until);
  if (!wasOpen && !run.open.includes(host)) {
    run.open.push(host);
    run.openSeen.done += host.done;
    run.openSeen.spentMs += host.spentMs;
  }
  const after = run.options.after ?? ((wait: number, fn: () => void) => void setTimeout(fn, wait));
  after(Math.max(0, ms), () => {
    dispatch(run);
    settleIfDone(run);
  });
}

/** A job stops talking to its host: the host's slot is free and its latency known. */
function leaveHost<T>(run: Run<T>, host: HostState<T>, began: number): void {
  const spent = Math.max(0, run.options.now() - began);
  host.inFlight--;
  host.domain.inFlight--;
  host.done++;
  host.spentMs += spent;
  if (host.next < host.queue.length) {
    run.openSeen.done++;
    run.openSeen.spentMs += spent;
  }
  run.inFlight--;
  dispatch(run);
}

/** Starts jobs while the limits allow, at most `burst` now and the rest on `defer`'s call. */
function dispatch<T>(run: Run<T>): void {
  if (run.failure !== null) return;
  let drained = false;
  let started = 0;
  while (run.inFlight < run.concurrency && run.trailing < run.concurrency) {
    if (started === run.burst && run.options.defer) {
      if (!run.deferred) {
        run.deferred = true;
        run.options.defer(() => {
          run.deferred = false;
          dispatch(run);
        });
      }
      break;
    }
    const host = pickHost(run);
    if (host === null) break;
    startJob(run, host);
    started++;
    if (host.next < host.queue.length) continue;
    drained = true;
    run.openSeen.done -= host.done;
    run.openSeen.spentMs -= host.spentMs;
  }
  if (drained) run.open = run.open.filter((h) => h.next < h.queue.length);
}

/**
 * The host to start next, or null. The candidate is the eligible host (below `perHost`, its domain below
 * `perDomain`) with the most estimated time left (unknown latencies count as the mean seen so far): its own
 * rounds of `perHost`, or its domain's rounds of `perDomain` when those are more; on a tie, the one with fewer
 * requests in flight, so a run starts one request on every host before a second. Past the paced limit
 * ({@link PACE_HEADROOM}, {@link PACE_FLOOR}), only a host on the critical path (its time left within the headroom of
 * the longest) may start, or, within {@link EXPLORE_SLOTS} more, the first request of a host not measured yet (the
 * one with the most work left).
 */
function pickHost<T>(run: Run<T>): HostState<T> | null {
  const { perHost, perDomain, openSeen } = run;
  let best: HostState<T> | null = null;
  let bestScore = -1;
  let unmeasured: HostState<T> | null = null;
  let unmeasuredScore = -1;
  let work = 0;
  let longest = 0;
  let critical: HostState<T> | null = null;
  const mean = openSeen.done === 0 ? 1 : Math.max(openSeen.spentMs / openSeen.done, 1e-3);
  const now = run.options.now();
  for (const host of run.open) {
    const left = host.queue.length - host.next;
    if (left <= 0) continue;
    if (host.pausedUntil > now) continue;
    const latency = host.done > 0 ? host.spentMs / host.done : mean;
    const rounds = Math.max(Math.ceil(left / perHost), Math.ceil(host.domain.left / perDomain));
    const score = rounds * latency;
    work += left * latency;
    if (score > longest) {
      longest = score;
      critical = host;
    }
    if (host.inFlight >= perHost || host.domain.inFlight >= perDomain) continue;
    if (score > bestScore || (score === bestScore && best !== null && host.inFlight < best.inFlight)) {
      best = host;
      bestScore = score;
    }
    if (host.done === 0 && host.inFlight === 0 && score > unmeasuredScore) {
      unmeasured = host;
      unmeasuredScore = score;
    }
  }
  run.critical = critical;
  if (best === null || bestScore * PACE_HEADROOM >= longest) return best;
  const paced = Math.max(Math.min(run.open.length, PACE_FLOOR), Math.ceil((PACE_HEADROOM * work) / longest));
  if (run.inFlight < paced) return best;
  return run.inFlight < paced + EXPLORE_SLOTS ? unmeasured : null;
}
