/**
 * Finishing a run: the data files of docs/data-files.md written into the work folder, then the folder published
 * (`io/runs/paths.ts`). Run again after a crash, it rewrites the same files from the same journal.
 *
 * Receipt files and pages are written without fsync: SIGKILL cannot lose what the kernel already has, the rename
 * that publishes comes after them, and the journal they are rebuilt from is fsynced.
 */
import { mkdir, open, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CrawlFacts } from '../core/crawl-facts.ts';
import type { CrawlPlan, PlannedEndpoint } from '../core/crawl-plan.ts';
import { type RunSummary, summarizeRun } from '../core/crawl-summary.ts';
import { delistings } from '../core/delisting.ts';
import { isOptedOut, type OptOutList } from '../core/opt-out.ts';
import { rulesDocument } from '../core/rules.ts';
import { buildSaves, type SaveEntry } from '../core/saves.ts';
import { buildSkipPages, MISMATCH_REASONS } from '../core/skip-listing.ts';
import type { SourceReport } from '../core/source-listing.ts';
import { writeFileDurably } from '../io/durable-file.ts';
import { readReceiptFile } from '../io/receipts/files.ts';
import {
  publishRun,
  type RunPaths,
  type RunPointer,
  readPointer,
  readRunIndex,
  readRunJson,
} from '../io/runs/paths.ts';
import { type Carried, carryForward } from './carried.ts';

/** What a finished run is published from. */
export type FinishedRun = {
  paths: RunPaths;
  runId: string;
  startedAt: string;
  finishedAt: Date;
  durationS: number;
  baseUrl: string;
  plan: Pick<CrawlPlan, 'lists' | 'listedIn' | 'endpoints'>;
  sources: Record<string, SourceReport>;
  /**
   * The facts of every recorded probe as its line of `receipts.ndjson` (`JSON.stringify` of its {@link CrawlFacts}),
   * in the plan's order: one string per endpoint rather than an object tree, parsed again only a probe at a time.
   * Their receipt files are already in the work folder's `receipts/`.
   */
  facts: readonly string[];
  interrupted: number;
  /** Planned endpoints not probed because their host's daily budget was spent: their last receipts are carried. */
  overBudget?: ReadonlySet<string>;
  /** Hosts that opted out: their endpoints left the run, not the lists (never delisted). */
  optOut?: OptOutList;
  /** The plan was cut by `--limit`: nothing is delisted. */
  limited?: boolean;
  /** Members of `run.json` (kind, options, resumed…). */
  run: Record<string, unknown>;
};

/** Writes every data file of the run and publishes it. */
export async function finalizeRun(run: FinishedRun): Promise<RunPointer> {
  const dir = join(run.paths.work, run.runId);
  const previous = await previousRun(run.paths);
  const facts = parsedFacts(run.facts);
  await removeTempFiles(join(dir, 'receipts'));
  // Endpoints only failed sources listed keep their last published receipts (crawl/carried.ts), and so do those
  // a spent daily budget left unasked.
  const overBudget = run.overBudget ?? new Set<string>();
  const listed = new Set(run.plan.endpoints.map((e) => e.urlNorm));
  const carried = await carryForward(
    run.paths,
    previous,
    run.sources,
    new Set([...listed].filter((url) => !overBudget.has(url))),
    dir,
    overBudget,
  );
  const delisted = delistings({
    runId: run.runId,
    at: run.finishedAt.toISOString(),
    previous:
      previous === null
        ? null
        : { runId: previous.runId, lines: previous.lines, delisted: await previous.delisted() },
    sources: run.sources,
    listed,
    optedOut: (host) => isOptedOut(host, run.optOut ?? new Set()),
    limited: run.limited === true,
  });
  const saves = await savesOf(run, facts, dir, previous);
  const summary = summarizeRun({
    runId: run.runId,
    startedAt: run.startedAt,
    crawledAt: run.finishedAt.toISOString(),
    durationS: run.durationS,
    facts,
    previous: previous === null ? null : { runId: previous.runId, urls: previous.urls },
    sources: run.sources,
    lists: run.plan.lists,
    listedIn: run.plan.listedIn,
    saves: saves.saves.filter((s) => s.run_id === run.runId).length,
    interrupted: run.interrupted,
    carried: carried.lines.length,
    delisted: delisted.fresh.length,
  });
  const last = previous?.stats.at(-1) ?? null;
  const pages = buildSkipPages(
    skipsOf(facts),
    summary,
    run.baseUrl,
    last === null
      ? null
      : { run_id: last.run_id, crawled_at: last.crawled_at, endpoints_covered: last.endpoints_covered },
    carried.lines,
  );
  await writeAll(
    join(dir, 'skips'),
    pages.map((page) => [`${page.page}.json`, pretty(page)]),
  );
  await writeLines(
    join(dir, 'receipts.ndjson'),
    [run.facts, carried.lines.map((f) => JSON.stringify(f))],
    (line) => `${line}\n`,
  );
  // A disputed endpoint's listings are nobody's expectation: the live check must not take one in.
  await writeLines(
    join(dir, 'listings.json'),
    [listingRecords(run.plan.endpoints), carried.listings],
    prettyItem,
    ',\n',
    ['[\n', '\n]\n'],
  );
  await writeAll(dir, [
    ...dataFiles(run, { summary, saves, carried, previous }),
    ['delisted.json', pretty(delistedFile(run.runId, delisted))],
  ]);
  await writeFileDurably(join(dir, 'run.json'), pretty(runFileOf(run, summary, carried)));
  return publishRun(run.paths, run.runId, run.finishedAt);
}

/** The saves file: this run's saves, each with its receipt read back from its file, and the earlier runs' ones. */
async function savesOf(
  run: FinishedRun,
  facts: Iterable<CrawlFacts>,
  dir: string,
  previous: Previous | null,
) {
  // Only the saves show receipts: read those few back from their files.
  const receipts = new Map<string, Record<string, unknown>>();
  for (const f of facts) {
    if (!MISMATCH_REASONS.has(f.reason)) continue;
    const receipt = await readReceiptFile(join(dir, 'receipts'), f.id);
    if (receipt !== null) receipts.set(f.id, receipt as Record<string, unknown>);
  }
  return buildSaves({
    now: run.finishedAt,
    runId: run.runId,
    facts,
    receipts,
    earlier: previous?.saves ?? [],
  });
}

/** The run's data files of docs/data-files.md, by name, besides the skip pages and `run.json`. */
function dataFiles(
  run: FinishedRun,
  made: {
    summary: RunSummary;
    saves: Awaited<ReturnType<typeof savesOf>>;
    carried: Carried;
    previous: Previous | null;
  },
): Array<[string, string]> {
  const { summary, previous } = made;
  return [
    ['disputes.json', pretty(disputesFile(run.plan.endpoints))],
    ['summary.json', pretty(summary)],
    ['stats.json', pretty({ schema: 1, runs: [...(previous?.stats ?? []), summary] })],
    ['saves.json', pretty(made.saves)],
    ['rules.json', pretty(rulesDocument())],
  ];
}

/** `run.json`: what the run was, over the members its kind adds. */
function runFileOf(run: FinishedRun, summary: RunSummary, carried: Carried) {
  return {
    schema: 1,
    run_id: run.runId,
    ...run.run,
    started_at: run.startedAt,
    finished_at: summary.crawled_at,
    base_url: run.baseUrl,
    sources: run.sources,
    total_receipts: summary.total_receipts,
    interrupted: run.interrupted,
    carried: carried.lines.length,
  };
}

type Previous = {
  runId: string;
  urls: Set<string>;
  stats: RunSummary[];
  saves: SaveEntry[];
  lines: unknown[];
  /** Its `listings.json`, read only when endpoints are carried. */
  listings: () => Promise<unknown>;
  /** The delistings it showed (`delisted.json`; none before the file existed). */
  delisted: () => Promise<unknown[]>;
};

/** The published run before this one: its statistics, saves, index lines and listings, the URLs it covered. */
async function previousRun(paths: RunPaths): Promise<Previous | null> {
  const pointer = await readPointer(paths);
  if (pointer === null) return null;
  const stats = (await readRunJson(paths, pointer.run_id, 'stats.json')) as { runs?: unknown } | null;
  const saves = (await readRunJson(paths, pointer.run_id, 'saves.json')) as { saves?: unknown } | null;
  const urls = new Set<string>();
  const lines = await readRunIndex(paths, pointer.run_id);
  for (const line of lines) {
    const url = (line as { url_norm?: unknown } | null)?.url_norm;
    if (typeof url === 'string') urls.add(url);
  }
  return {
    runId: pointer.run_id,
    urls,
    stats: Array.isArray(stats?.runs) ? (stats.runs as RunSummary[]) : [],
    saves: Array.isArray(saves?.saves) ? (saves.saves as SaveEntry[]) : [],
    lines,
    listings: () => readRunJson(paths, pointer.run_id, 'listings.json'),
    delisted: async () => {
      const file = (await readRunJson(paths, pointer.run_id, 'delisted.json')) as {
        delisted?: unknown;
      } | null;
      return Array.isArray(file?.delisted) ? file.delisted : [];
    },
  };
}

/** `delisted.json`: the endpoints delisted by this run (`new`) and every delisting still shown. */
function delistedFile(runId: string, made: ReturnType<typeof delistings>) {
  return { schema: 1, run_id: runId, new: made.fresh.length, count: made.shown.length, delisted: made.shown };
}

/** `disputes.json`: the endpoints whose listings disagree, each with the terms in dispute and the listings. */
function disputesFile(endpoints: FinishedRun['plan']['endpoints']) {
  const disputes = endpoints.flatMap((e) =>
    e.dispute ? [{ url: e.url, url_norm: e.urlNorm, method: e.method, ...e.dispute }] : [],
  );
  return { schema: 1, count: disputes.length, disputes };
}

/** A listing in the `npm run listings:import` format, with its metadata and note when it has them. */
function listingRecord(e: PlannedEndpoint) {
  const l = e.listing;
  const m = e.metadata;
  return {
    url: l.url,
    method: l.method,
    price_usd: l.priceUsd,
    network: l.network,
    asset: l.asset,
    pay_to: l.payTo,
    source: l.source,
    ...(e.note === undefined ? {} : { listing_note: e.note }),
    ...(m === undefined
      ? {}
      : {
          service_name: m.serviceName,
          tags: m.tags,
          description: m.description,
          icon_url: m.iconUrl,
          last_updated: m.lastUpdated,
        }),
  };
}

function pretty(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Only the skips are listed in the skip pages: the other probes are never held at once. */
function skipsOf(facts: Iterable<CrawlFacts>): CrawlFacts[] {
  const skips: CrawlFacts[] = [];
  for (const f of facts) if (f.verdict === 'skip') skips.push(f);
  return skips;
}

/** The listing records of the endpoints not in dispute, made one at a time. */
function* listingRecords(endpoints: readonly PlannedEndpoint[]): Iterable<unknown> {
  for (const e of endpoints) if (!e.dispute) yield listingRecord(e);
}

/** The facts of `lines`, parsed one at a time on each pass: never all of them at once. */
function parsedFacts(lines: readonly string[]): Iterable<CrawlFacts> {
  return {
    *[Symbol.iterator]() {
      for (const line of lines) yield JSON.parse(line) as CrawlFacts;
    },
  };
}

/** One member of an array as `pretty` writes it: indented one level, JSON strings never hold a raw line break. */
function prettyItem(value: unknown): string {
  return `  ${JSON.stringify(value, null, 2).replaceAll('\n', '\n  ')}`;
}

/** Most text gathered before it is written out (`writeLines`). */
const WRITE_CHUNK_CHARS = 1 << 16;

/**
 * Writes `file` from the items of `parts` in order, each as `text` makes it and `between` two of them, inside
 * `around` (an empty array as `[]\n`, as `pretty` writes it, when `around` is given): a chunk at a time, so no
 * text of the whole file is ever built.
 */
async function writeLines<I>(
  file: string,
  parts: ReadonlyArray<Iterable<I>>,
  text: (item: I) => string,
  between = '',
  around: readonly [string, string] | null = null,
): Promise<void> {
  const handle = await open(file, 'w');
  try {
    let chunk = '';
    let first = true;
    for (const part of parts)
      for (const item of part) {
        chunk += (first ? (around?.[0] ?? '') : between) + text(item);
        first = false;
        if (chunk.length < WRITE_CHUNK_CHARS) continue;
        // Written at the handle's position: one chunk after the other.
        await handle.writeFile(chunk, 'utf8');
        chunk = '';
      }
    if (around !== null) chunk += first ? '[]\n' : around[1];
    await handle.writeFile(chunk, 'utf8');
  } finally {
    await handle.close();
  }
}

/** Writes files into `dir`, 64 at a time. */
async function writeAll(dir: string, files: ReadonlyArray<readonly [string, string]>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < files.length; i += 64) {
    await Promise.all(files.slice(i, i + 64).map(([name, text]) => writeFile(join(dir, name), text, 'utf8')));
  }
}

/** Temp files a kill left behind while a receipt file was being written: never published. */
async function removeTempFiles(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(
    names.filter((name) => name.endsWith('.tmp')).map((name) => rm(join(dir, name), { force: true })),
  );
}
