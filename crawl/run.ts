/**
 * A crawl run: read the sources, plan, probe every endpoint under the per-host limits
 * with a signed receipt each, and publish the run. Crash-safe: the plan is written before the first probe, every
 * probe is journaled as started (fsynced) before its request is sent and as done (fsynced, with its receipt)
 * after, so `resume` finishes the newest unfinished run without sending any request twice.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import type { CrawlFacts } from '../core/crawl-facts.ts';
import { type CrawlPlan, type PlannedEndpoint, planCrawl } from '../core/crawl-plan.ts';
import { isOptedOut, type OptOutList } from '../core/opt-out.ts';
import { MAX_RETRIES, MAX_RETRY_AFTER_MS, RUN_BUDGET_MS } from '../core/politeness.ts';
import type { SourceListing, SourceReport } from '../core/source-listing.ts';
import { writeFileDurably } from '../io/durable-file.ts';
import { MAX_IN_FLIGHT_PER_ADDRESS } from '../io/probe/address-slots.ts';
import { openRunJournal, visitRunJournal } from '../io/runs/journal.ts';
import { acquireRunLock } from '../io/runs/lock.ts';
import {
  listRuns,
  newRunId,
  publishRun,
  type RunPaths,
  type RunPointer,
  readPointer,
} from '../io/runs/paths.ts';
import { finalizeRun } from './finalize.ts';
import { type HostBudget, UNLIMITED_BUDGET } from './host-budget.ts';
import { type EndpointDeps, type ProbedEndpoint, probeOrPutOff } from './probe-endpoint.ts';
import { createProgress, type ProgressOut } from './progress.ts';
import { createReceiptBatches, type ReceiptBatches } from './receipt-batches.ts';
import { registrableDomain } from './registrable-domain.ts';
import { runPerHost } from './scheduler.ts';
import type { SourceRead } from './sources/_result.ts';

/** docs/api.md §2.10, §8: at most 3 requests in flight per host. */
export const PER_HOST = 3;

/**
 * At most 12 requests in flight over the hosts of one registrable domain (`crawl/registrable-domain.ts`): four hosts'
 * worth, so an operator serving its API under a few names is crawled as fast as before, while a wildcard domain
 * listed under hundreds of names gets 12, not 3 per name (docs/decisions.md "The crawl").
 */
export const PER_DOMAIN = 12;

export type CrawlDeps = Omit<EndpointDeps, 'runId' | 'origin'> & {
  paths: RunPaths;
  /** Reads every source (called only for a new run). */
  readSources: () => Promise<SourceRead[]>;
  /** Hosts that asked not to be probed (`core/opt-out.ts`); none by default. */
  optOut?: OptOutList;
  /** Opens the day's per-host request budgets for this run (`crawl/host-budget.ts`); unlimited by default. */
  openBudget?: (runId: string, listed: ReadonlyMap<string, number>) => Promise<HostBudget>;
  /** Monotonic milliseconds, for the scheduler and the progress. */
  monotonic: () => number;
  progressOut: ProgressOut;
  log: (line: string) => void;
};

/**
 * `concurrency` null: 3 per host for every host (every host kept busy), at most {@link MAX_DEFAULT_CONCURRENCY}.
 * `budgetMs`: the run's time budget, within which a `Retry-After` pause may put a URL off (default
 * {@link RUN_BUDGET_MS}).
 */
export type CrawlOptions = {
  resume: boolean;
  concurrency: number | null;
  limit: number | null;
  budgetMs?: number;
};

/** The default global concurrency's ceiling: sockets and memory stay bounded on a large crawl. */
export const MAX_DEFAULT_CONCURRENCY = 2048;

/**
 * Probes started in one turn of the event loop. A run's first dispatch starts up to 3 per host at once; started all
 * in one go, none of their requests left before the last was made (10,000 endpoints on 500 hosts: about 300 ms of the
 * main thread), so the hosts that bound the run began that much late (docs/decisions.md, "The crawl").
 */
const START_BURST = 100;

/**
 * Start records journaled ahead for the host that bounds the run (`crawl/scheduler.ts` `prepare`): written and fsynced
 * while its current requests are in flight, so a freed slot's next request leaves at once. Under load an fsync took
 * 7 ms at the median and 50 ms at p90, and the dominant host's slots sat idle that long on every round. After a stop,
 * at most this many endpoints were journaled as started without their request having left; like a probe sent and not
 * recorded, they are not sent again by a resume.
 */
const START_AHEAD = 2 * PER_HOST;

/** What a run ended with. */
export type CrawlResult = { pointer: RunPointer; probed: number; interrupted: number; total: number };

/** The plan as written to `plan.json` before the first probe. */
export type PlanFile = {
  started_at: string;
  options: {
    concurrency: number;
    per_host: number;
    per_domain?: number;
    per_address?: number;
    timeout_ms: number;
    limit: number | null;
  };
  sources: Record<string, SourceReport>;
  /** Listings left out because their host opted out (`core/opt-out.ts`): how many, on how many hosts. */
  opted_out?: { hosts: number; endpoints: number };
  plan: CrawlPlan;
};

/** Runs (or resumes) a crawl and publishes it. Throws only for what the operator must fix (nothing to resume). */
export async function runCrawl(deps: CrawlDeps, options: CrawlOptions): Promise<CrawlResult> {
  // One crawl at a time on a DATA_DIR; a lock left by a killed crawl is stale and taken over (io/runs/lock.ts).
  const lock = await acquireRunLock(deps.paths.root, 'crawl');
  try {
    return await crawlLocked(deps, options);
  } finally {
    await lock.release();
  }
}

async function crawlLocked(deps: CrawlDeps, options: CrawlOptions): Promise<CrawlResult> {
  const t0 = deps.monotonic();
  let run: { runId: string; planFile: PlanFile; resumed: boolean };
  if (options.resume) {
    const unfinished = (await listRuns(deps.paths.work)).at(-1);
    if (unfinished === undefined) return publishLeftover(deps);
    const planFile = await readPlan(join(deps.paths.work, unfinished, 'plan.json'));
    deps.log(`resuming run ${unfinished}`);
    run = { runId: unfinished, planFile, resumed: true };
  } else {
    run = { ...(await startRun(deps, options)), resumed: false };
  }
  const { runId, planFile } = run;
  const deadline = t0 + (options.budgetMs ?? RUN_BUDGET_MS);
  const { done, probed, overBudget } = await probePlanned(deps, runId, planFile, options, deadline);
  const endpoints = planFile.plan.endpoints;
  const facts = endpoints.flatMap((e) => done.get(e.urlNorm) ?? []);
  done.clear();
  if (overBudget.size > 0)
    deps.log(`${overBudget.size} endpoints not probed: their hosts' daily request budgets are spent`);
  const interrupted = endpoints.length - facts.length - overBudget.size;
  if (interrupted > 0)
    deps.log(`${interrupted} probes were sent before a stop but not recorded; not sent again`);
  const pointer = await finalizeRun({
    paths: deps.paths,
    runId,
    startedAt: planFile.started_at,
    finishedAt: deps.now(),
    durationS: (deps.monotonic() - t0) / 1000,
    baseUrl: deps.baseUrl,
    plan: planFile.plan,
    sources: planFile.sources,
    facts,
    interrupted,
    overBudget,
    optOut: deps.optOut ?? new Set(),
    limited: planFile.options.limit !== null,
    run: {
      kind: 'crawl',
      options: planFile.options,
      resumed: run.resumed,
      ...(planFile.opted_out ? { opted_out: planFile.opted_out } : {}),
      ...(overBudget.size > 0 ? { over_budget: overBudget.size } : {}),
    },
  });
  return { pointer, probed, interrupted, total: endpoints.length };
}

/** A new run: reads the sources, plans, and writes the plan before the first probe. */
async function startRun(
  deps: CrawlDeps,
  options: CrawlOptions,
): Promise<{ runId: string; planFile: PlanFile }> {
  const runId = newRunId(deps.now(), deps.random);
  const { sources, optedOut, plan } = await readAndPlan(deps, options);
  const planFile: PlanFile = {
    started_at: deps.now().toISOString(),
    options: {
      concurrency: options.concurrency ?? defaultConcurrency(plan.endpoints),
      per_host: PER_HOST,
      per_domain: PER_DOMAIN,
      per_address: MAX_IN_FLIGHT_PER_ADDRESS,
      timeout_ms: 5000,
      limit: options.limit,
    },
    sources,
    ...(optedOut.endpoints > 0 ? { opted_out: optedOut } : {}),
    plan,
  };
  await mkdir(join(deps.paths.work, runId), { recursive: true });
  await writeFileDurably(join(deps.paths.work, runId, 'plan.json'), planFileText(planFile));
  deps.log(
    `run ${runId}: ${plan.endpoints.length} endpoints on ${new Set(plan.endpoints.map((e) => e.host)).size} hosts`,
  );
  const disputed = plan.endpoints.filter((e) => e.dispute).length;
  if (disputed > 0)
    deps.log(`${disputed} endpoints have listings that disagree: held to none (disputes.json)`);
  return { runId, planFile };
}

/** Most text of `plan.json` gathered before it is written out. */
const PLAN_CHUNK_CHARS = 1 << 16;

/**
 * `JSON.stringify(planFile)` (its plan last, the plan's endpoints first, as {@link startRun} builds it) in chunks, the
 * endpoints a few at a time: at 50,000 endpoints the whole text was 33 MB, and its buffer outlived the write well into
 * the probing.
 */
export function* planFileText(planFile: PlanFile): Generator<string> {
  const { plan, ...head } = planFile;
  const { endpoints, ...rest } = plan;
  const headText = JSON.stringify(head);
  const restText = JSON.stringify(rest);
  let chunk = `${headText.slice(0, -1)}${headText === '{}' ? '' : ','}"plan":{"endpoints":[`;
  for (const [i, endpoint] of endpoints.entries()) {
    chunk += (i === 0 ? '' : ',') + JSON.stringify(endpoint);
    if (chunk.length < PLAN_CHUNK_CHARS) continue;
    yield chunk;
    chunk = '';
  }
  yield `${chunk}]${restText === '{}' ? '' : `,${restText.slice(1, -1)}`}}}`;
}

/**
 * Reads every source and plans the run. The listings read are dropped once this returns: only the plan (one
 * endpoint per URL) stays through the probing.
 */
async function readAndPlan(deps: CrawlDeps, options: CrawlOptions) {
  const reads = await deps.readSources();
  const sources = Object.fromEntries(reads.map((r) => [r.name, r.report]));
  for (const read of reads)
    deps.log(`source ${read.name}: ${read.report.ok ? 'ok' : 'FAILED'}, ${read.report.note}`);
  // Nothing read is no news: publishing it would replace the listings with an empty run (docs/data-files.md).
  if (!reads.some((r) => r.report.ok)) throw new NoSourceReadError(reads);
  const { kept, optedOut } = withoutOptedOut(
    reads.flatMap((r) => r.listings),
    deps.optOut,
  );
  return { sources, optedOut, plan: planCrawl(kept, options.limit) };
}

/** The listings whose hosts did not opt out, and how many of the others on how many hosts. */
function withoutOptedOut(
  listings: SourceListing[],
  optOut: OptOutList | undefined,
): { kept: SourceListing[]; optedOut: { hosts: number; endpoints: number } } {
  if (optOut === undefined || optOut.size === 0)
    return { kept: listings, optedOut: { hosts: 0, endpoints: 0 } };
  const kept: SourceListing[] = [];
  const hosts = new Set<string>();
  const urls = new Set<string>();
  for (const listing of listings) {
    const host = new URL(listing.urlNorm).host;
    if (!isOptedOut(host, optOut)) kept.push(listing);
    else {
      hosts.add(host);
      urls.add(listing.urlNorm);
    }
  }
  return { kept, optedOut: { hosts: hosts.size, endpoints: urls.size } };
}

/**
 * Probes every planned endpoint the journal has not seen started, under the per-host limits: each journaled as
 * started before its request leaves and as done, with its receipt, after. A `429`/`503` with `Retry-After` puts the
 * URL back on its host's queue and pauses the host, within the run's `deadline` and {@link MAX_RETRIES}; a host whose
 * daily request budget is spent gets no more requests (its endpoints are `overBudget`). The facts of every finished
 * probe (this pass's and those replayed), and how many this pass probed.
 */
// long: the per-endpoint step reads as one sequence (budget, journal, probe or retry, record), kept beside its setup.
async function probePlanned(
  deps: CrawlDeps,
  runId: string,
  planFile: PlanFile,
  options: CrawlOptions,
  deadline: number,
): Promise<{ done: Map<string, string>; probed: number; overBudget: Set<string> }> {
  const dir = join(deps.paths.work, runId);
  const journalPath = join(dir, 'probes.ndjson');
  const files = createReceiptBatches(join(dir, 'receipts'));
  const { started, done } = await replay(journalPath, files);
  const endpoints = planFile.plan.endpoints;
  const todo = endpoints.filter((e) => !started.has(e.urlNorm));
  const journal = await openRunJournal(journalPath);
  const progress = createProgress({
    label: 'crawl',
    total: endpoints.length,
    out: deps.progressOut,
    now: deps.monotonic,
    alreadyDone: endpoints.length - todo.length,
  });
  const endpointDeps: EndpointDeps = { ...deps, runId, origin: 'crawl' };
  const budget = deps.openBudget ? await deps.openBudget(runId, listedPerHost(endpoints)) : UNLIMITED_BUDGET;
  const overBudget = new Set<string>();
  const retries = new Map<string, number>();
  // Endpoints whose first request may leave once their start record is on disk; false: the host's budget is spent.
  const claims = new Map<string, Promise<boolean>>();
  const claim = (endpoint: PlannedEndpoint): Promise<boolean> => {
    // Journaled before the request leaves: after a crash this URL is never sent again.
    const claimed = budget.take(endpoint.host, 1)
      ? journal.append({ t: 'start', u: endpoint.urlNorm }).then(() => true)
      : Promise.resolve(false);
    // Awaited by the endpoint's job; a run that fails first may leave one unawaited.
    claimed.catch(() => {});
    return claimed;
  };
  try {
    await runPerHost(
      todo.map((endpoint) => ({ host: endpoint.host, item: endpoint })),
      async (endpoint: PlannedEndpoint, released, later) => {
        const tries = retries.get(endpoint.urlNorm) ?? 0;
        const claimed = claims.get(endpoint.urlNorm);
        claims.delete(endpoint.urlNorm);
        const allowed = tries === 0 ? await (claimed ?? claim(endpoint)) : budget.take(endpoint.host, 1);
        if (!allowed) {
          overBudget.add(endpoint.urlNorm);
          return;
        }
        // The host takes its next request as soon as this one is answered, while this receipt is made.
        const record = await probeOrPutOff(endpointDeps, endpoint, released, {
          another: () => budget.take(endpoint.host, 1),
          retry: (ms) => {
            if (tries >= MAX_RETRIES || ms > MAX_RETRY_AFTER_MS || deps.monotonic() + ms > deadline)
              return false;
            retries.set(endpoint.urlNorm, tries + 1);
            later(ms);
            return true;
          },
        });
        if (record === null) return;
        // The file is queued (not fsynced: the journal is the durable copy, and a resume writes it again), so the
        // run keeps only the small facts in memory. The journal line carries the receipt's signed text as it is.
        await files.add(record.receipt.id, record.json);
        // The facts are kept as their index line: one string per endpoint, not an object tree.
        const line = JSON.stringify(record.facts);
        await journal.appendJson(
          `{"t":"done","u":${JSON.stringify(endpoint.urlNorm)},"facts":${line},"receipt":${record.json}}`,
        );
        done.set(endpoint.urlNorm, line);
        progress.tick(record.facts.verdict);
      },
      {
        perHost: PER_HOST,
        perDomain: PER_DOMAIN,
        domainOf: registrableDomain,
        concurrency: options.concurrency ?? planFile.options.concurrency,
        now: deps.monotonic,
        burst: START_BURST,
        defer: setImmediate,
        prepare: (endpoint) => {
          // A URL put back after a `Retry-After` was journaled on its first try.
          if (!retries.has(endpoint.urlNorm) && !claims.has(endpoint.urlNorm))
            claims.set(endpoint.urlNorm, claim(endpoint));
        },
        prepareAhead: START_AHEAD,
      },
    );
  } catch (error) {
    // The first failure is the one to report; a missing receipt file after it is a consequence.
    await files.close().catch(() => {});
    throw error;
  } finally {
    await journal.close();
    await budget.flush();
  }
  // Finalizing reads some receipt files back (the saves); a missing one stops the run before publication.
  await files.close();
  progress.finish();
  return { done, probed: todo.length - overBudget.size, overBudget };
}

/** Endpoints planned per host: each host's share of the daily budget (`crawl/host-budget.ts`). */
function listedPerHost(endpoints: readonly PlannedEndpoint[]): Map<string, number> {
  const listed = new Map<string, number>();
  for (const e of endpoints) listed.set(e.host, (listed.get(e.host) ?? 0) + 1);
  return listed;
}

/** 3 in flight for every host of the plan, within the ceiling. */
function defaultConcurrency(endpoints: readonly PlannedEndpoint[]): number {
  const hosts = new Set(endpoints.map((e) => e.host)).size;
  return Math.max(PER_HOST, Math.min(MAX_DEFAULT_CONCURRENCY, PER_HOST * hosts));
}

/**
 * The journal's started URLs and the facts of finished probes (a later record for a URL wins); the receipt files
 * of finished probes are written again, since they were not fsynced. A parsed receipt keeps the member order of its
 * signed text, so `JSON.stringify` gives that text back. The journal is read as a stream, a record at a time: only
 * the URLs and facts stay in memory, never the receipts of the whole journal.
 */
async function replay(
  journalPath: string,
  files: ReceiptBatches,
): Promise<{ started: Set<string>; done: Map<string, string> }> {
  const started = new Set<string>();
  const done = new Map<string, string>();
  await visitRunJournal(journalPath, async (line) => {
    const record = line as {
      t?: unknown;
      u?: unknown;
      facts?: CrawlFacts;
      receipt?: ProbedEndpoint['receipt'];
    };
    if (typeof record.u !== 'string') return;
    started.add(record.u);
    if (record.t === 'done' && record.facts !== undefined && record.receipt !== undefined) {
      await files.add(record.receipt.id, JSON.stringify(record.receipt));
      done.set(record.u, JSON.stringify(record.facts));
    }
  });
  return { started, done };
}

const PlanSchema = v.looseObject({
  started_at: v.string(),
  options: v.looseObject({}),
  sources: v.record(v.string(), v.looseObject({})),
  plan: v.looseObject({ endpoints: v.array(v.looseObject({ urlNorm: v.string(), host: v.string() })) }),
});

/** Reads the plan of an unfinished run (our own file; a damaged one is an error to report, not to guess around). */
async function readPlan(path: string): Promise<PlanFile> {
  const parsed = v.safeParse(PlanSchema, JSON.parse(await readFile(path, 'utf8')));
  if (!parsed.success) throw new Error(`${path} is not a crawl plan: ${parsed.issues[0].message}`);
  return parsed.output as unknown as PlanFile;
}

/** `--resume` with no unfinished run: publish a run a crash left renamed but unpublished, else say so. */
async function publishLeftover(deps: CrawlDeps): Promise<CrawlResult> {
  const latest = (await listRuns(deps.paths.runs)).at(-1);
  const pointer = await readPointer(deps.paths);
  if (latest === undefined || pointer?.run_id === latest)
    throw new NothingToResumeError('no unfinished crawl run to resume');
  deps.log(`publishing run ${latest}, finished before a stop`);
  return { pointer: await publishRun(deps.paths, latest, deps.now()), probed: 0, interrupted: 0, total: 0 };
}

/** `--resume` found nothing to finish. */
export class NothingToResumeError extends Error {
  override name = 'Crawl.NothingToResumeError';
}

/** No listing source was read successfully: the run stops before its plan, and nothing is published. */
export class NoSourceReadError extends Error {
  override name = 'Crawl.NoSourceReadError';
  constructor(reads: readonly SourceRead[]) {
    const each = reads.map((r) => `${r.name}: ${r.report.note}`).join('; ');
    super(
      `no listing source could be read (${reads.length === 0 ? 'none configured' : each}); nothing was ` +
        'probed or published, and the published run stays as it was',
    );
  }
}
