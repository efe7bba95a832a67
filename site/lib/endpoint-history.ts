/**
 * The facts behind the endpoint, host and task pages (docs/site.md "Endpoint, host and task pages"), gathered in one
 * pass: each published crawl and bazaar run of the window (90 days) streams its receipt index once, oldest run
 * first, and every line lands in its endpoint's list of checks; the published saves, disputes and the latest
 * known-answer run are read once each. No page scans anything again: the pages are written from these groups.
 *
 * Memory follows the checks, kept small: seven members each, their repeated strings (wallets, networks, reasons)
 * shared through one table.
 */
import { createReadStream, existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as v from 'valibot';
import { type PaidCallRecord, paidCallOfLine, serviceIdOf } from '../../core/catalog.ts';
import { delistingKey, type ShownDelisting, shownDelistings } from '../../core/delisting.ts';
import { endpointKey } from '../../core/endpoint-paths.ts';
import type { EndpointCheck } from '../../core/endpoint-timeline.ts';
import { receiptUrlOf } from '../../core/receipt.ts';
import { normalizeUrl } from '../../core/url.ts';
import { eachCachedIndexLine, pruneHistoryCache } from './history-cache.ts';
import { type IndexLine, publishedRun, readRunFile, type SiteInput } from './published.ts';
import { parseFile, Saves } from './schemas.ts';

/** The days of history an endpoint page shows. */
export const HISTORY_DAYS = 90;
const DAY_MS = 86_400_000;

/** Where an endpoint is listed, as its newest check was held to it. */
export type EndpointListing = {
  source_list: string | null;
  also_listed_in: string[];
  listed_price_usd: number | null;
  listed_pay_to: string | null;
  listed_network: string | null;
  /** The terms its listings disagree on (docs/data-files.md "Disputed listings"); empty when none. */
  disputed: string[];
  /** The disputing listings, from the published run's `disputes.json` (the first 20). */
  dispute_listings: Array<Record<string, unknown>>;
};

/** An endpoint's known-answer record for one task of the catalog (the latest known-answer run). */
export type TaskRecord = {
  task: string;
  service_id: string;
  calls: number;
  /** Calls whose answer could be checked against the task's known answer. */
  checked: number;
  passes: number;
  /** `passes / checked`, or null with no checked answer. */
  pass_rate: number | null;
};

/** An endpoint of the build: its checks of the window, its listing and its known-answer records. */
export type SiteEndpoint = {
  key: string;
  url: string;
  url_norm: string;
  method: string;
  host: string;
  /** Every check of the window, in the order read (oldest run first). */
  checks: EndpointCheck[];
  listing: EndpointListing | null;
  /** Shown as delisted by the published crawl run (`delisted.json`, `core/delisting.ts`); null when it is not. */
  delisted: ShownDelisting | null;
  tasks: TaskRecord[];
};

export type TaskInfo = {
  name: string;
  title: string | null;
  description: string;
  method: string;
  candidates: string[];
};

export type SiteHistory = {
  from: Date;
  to: Date;
  /** Runs read, oldest first (crawl and bazaar). */
  runs: string[];
  endpoints: Map<string, SiteEndpoint>;
  /** Endpoint keys by host, hosts sorted. */
  hosts: Map<string, string[]>;
  /** Hosts of the published crawl and bazaar runs: those with a badge in this build. */
  badgeHosts: Set<string>;
  /** Receipts with a page in this build (the published runs and the saves): links to others use the permalink. */
  receiptPages: Set<string>;
  /**
   * Receipt permalinks by id, for receipts without a page, where they differ from `receiptUrlOf` of the build's base
   * URL (which a link uses when the id is not here).
   */
  permalinks: Map<string, string>;
  tasks: TaskInfo[];
  knownAnswerRun: string | null;
  /** The paid calls of that run, as the lookup reads them: what the alternatives of a task are ranked from. */
  paidCalls: PaidCallRecord[];
};

const RUN_ID = /^\d{8}T\d{6}Z-[0-9a-f]{4,}$/;
const RunFile = v.looseObject({ finished_at: v.pipe(v.string(), v.isoTimestamp()) });

/** The published run folders of `kindDir` (crawl or bazaar) that finished inside the window, and the published one, oldest first. */
async function runsInWindow(kindDir: string, published: string | null, from: Date): Promise<string[]> {
  if (published === null) return [];
  const names = (await readdir(join(kindDir, 'runs')).catch(() => [] as string[]))
    .filter((name) => RUN_ID.test(name) && name <= published)
    .sort();
  const out: string[] = [];
  for (const name of names) {
    const dir = join(kindDir, 'runs', name);
    // A folder being deleted, or one without an index, is left out.
    if (!existsSync(join(dir, 'receipts.ndjson'))) continue;
    const run = await readRunFile(dir, 'run.json', RunFile).catch(() => null);
    // The published run always: every page that links here (skips, receipts, badges) is built from it.
    if (name === published || (run !== null && Date.parse(run.finished_at) >= from.getTime())) out.push(dir);
  }
  return out;
}

/** Gathers the history of every endpoint of the window: each source read once. */
export async function readSiteHistory(input: SiteInput): Promise<SiteHistory> {
  const to = await windowEnd(input);
  const from = new Date(to.getTime() - HISTORY_DAYS * DAY_MS);
  const g = newGathering(input.baseUrl);
  const runs: string[] = [];
  // Each run's index as read before, kept between builds (`site/lib/history-cache.ts`).
  const cacheDir = join(input.dataDir, 'site-builds', '.history-cache');
  for (const kind of ['crawl', 'bazaar'] as const) {
    const published = kind === 'crawl' ? input.crawlRun : input.bazaarRun;
    const dirs = await runsInWindow(join(input.dataDir, kind), published?.runId ?? null, from);
    for (const dir of dirs) {
      runs.push(dir);
      await readRunIndex(g, dir, cacheDir, kind, published !== null && dir === published.dir);
    }
  }
  pruneHistoryCache(cacheDir, runs);
  if (input.crawlRun !== null) {
    await addSaves(input.crawlRun.dir, g.record, g.seen, g.receiptPages);
    await addDisputes(input.crawlRun.dir, g.endpoints);
    await addDelistings(input.crawlRun.dir, g.endpoints);
  }
  const { tasks, runId, paidCalls } = await addKnownAnswers(input.dataDir, g.endpoints, g.record);
  return {
    from,
    to,
    runs,
    endpoints: g.endpoints,
    hosts: hostsOf(g.endpoints),
    badgeHosts: g.badgeHosts,
    receiptPages: g.receiptPages,
    permalinks: g.permalinks,
    tasks,
    knownAnswerRun: runId,
    paidCalls,
  };
}

/**
 * Where the window ends: when the newest published crawl or bazaar run finished (the build's time before the first
 * run). The pages then say what the data says as of its newest check, and a rebuild with no new run writes the same
 * bytes, so an incremental build rewrites nothing (docs/decisions.md "Endpoint pages as of the newest run").
 */
async function windowEnd(input: SiteInput): Promise<Date> {
  let newest: number | null = null;
  for (const run of [input.crawlRun, input.bazaarRun]) {
    if (run === null) continue;
    const file = await readRunFile(run.dir, 'run.json', RunFile).catch(() => null);
    const at = file === null ? Number.NaN : Date.parse(file.finished_at);
    if (!Number.isNaN(at) && (newest === null || at > newest)) newest = at;
  }
  return new Date(newest ?? Date.parse(input.builtAt));
}

/** What the pass over the runs builds up. */
type Gathering = {
  endpoints: Map<string, SiteEndpoint>;
  /** The newest crawl line's `issued_at` per endpoint key: that line says where it is listed. */
  newest: Map<string, string>;
  /** Receipt ids already taken (a receipt in two runs counts once). */
  seen: Set<string>;
  badgeHosts: Set<string>;
  receiptPages: Set<string>;
  permalinks: Map<string, string>;
  /** The build's base URL. */
  baseUrl: string;
  /** One copy of each repeated string (wallets, networks, reasons). */
  intern: (s: string | null) => string | null;
  record: Recorder;
};

function newGathering(baseUrl: string): Gathering {
  const strings = new Map<string, string>();
  const endpoints = new Map<string, SiteEndpoint>();
  const intern = (s: string | null): string | null => {
    if (s === null) return null;
    const known = strings.get(s);
    if (known !== undefined) return known;
    strings.set(s, s);
    return s;
  };
  const record: Recorder = (urlNorm, url, method, host) => {
    const key = endpointKey(urlNorm, method);
    let found = endpoints.get(key);
    if (found === undefined) {
      found = {
        key,
        url,
        url_norm: urlNorm,
        method,
        host,
        checks: [],
        listing: null,
        delisted: null,
        tasks: [],
      };
      endpoints.set(key, found);
    }
    return found;
  };
  return {
    endpoints,
    newest: new Map(),
    seen: new Set(),
    badgeHosts: new Set(),
    receiptPages: new Set(),
    permalinks: new Map(),
    baseUrl,
    intern,
    record,
  };
}

/** One run's receipt index, streamed (or from the cache): each line becomes a check of its endpoint. */
async function readRunIndex(
  g: Gathering,
  dir: string,
  cacheDir: string,
  kind: 'crawl' | 'bazaar',
  current: boolean,
): Promise<void> {
  await eachCachedIndexLine(dir, cacheDir, (line) => {
    if (current) {
      g.badgeHosts.add(line.host);
      g.receiptPages.add(line.id);
    }
    if (g.seen.has(line.id)) return;
    g.seen.add(line.id);
    addIndexLine(g, line as IndexLine & Record<string, unknown>, kind, current);
  });
}

function addIndexLine(
  g: Gathering,
  l: IndexLine & Record<string, unknown>,
  kind: 'crawl' | 'bazaar',
  current: boolean,
): void {
  const urlNorm = typeof l.url_norm === 'string' ? l.url_norm : normalizeUrl(l.url);
  const endpoint = g.record(urlNorm, l.url, l.method, l.host);
  endpoint.checks.push({
    at: l.issued_at,
    verdict: g.intern(l.verdict) as string,
    reason: g.intern(l.reason) as string,
    price_usd: typeof l.quoted_price_usd === 'number' ? l.quoted_price_usd : null,
    pay_to: g.intern(typeof l.pay_to === 'string' ? l.pay_to : null),
    network: g.intern(typeof l.network === 'string' ? l.network : null),
    receipt_id: l.id,
  });
  // Only a permalink that differs from the one the pages would write anyway (`receiptUrlOf` of the build's base
  // URL) is kept: a million receipts' URLs were the largest part of the history's memory.
  if (typeof l.receipt_url === 'string' && !current && l.receipt_url !== receiptUrlOf(g.baseUrl, l.id))
    g.permalinks.set(l.id, l.receipt_url);
  // The newest line says where the endpoint is listed (a bazaar line is held to no listing).
  if ((g.newest.get(endpoint.key) ?? '') <= l.issued_at && kind === 'crawl') {
    g.newest.set(endpoint.key, l.issued_at);
    endpoint.url = l.url;
    endpoint.listing = listingOf(l);
  }
}

function listingOf(l: Record<string, unknown>): EndpointListing {
  return {
    source_list: typeof l.source_list === 'string' ? l.source_list : null,
    also_listed_in: Array.isArray(l.also_listed_in) ? (l.also_listed_in as string[]) : [],
    listed_price_usd: typeof l.listed_price_usd === 'number' ? l.listed_price_usd : null,
    listed_pay_to: typeof l.listed_pay_to === 'string' ? l.listed_pay_to : null,
    listed_network: typeof l.listed_network === 'string' ? l.listed_network : null,
    disputed: Array.isArray(l.disputed) ? (l.disputed as string[]) : [],
    dispute_listings: [],
  };
}

/** Endpoint keys by host: hosts sorted, each host's endpoints by URL then method. */
function hostsOf(endpoints: Map<string, SiteEndpoint>): Map<string, string[]> {
  const hosts = new Map<string, string[]>();
  for (const endpoint of [...endpoints.values()].sort((a, b) =>
    a.url_norm < b.url_norm ? -1 : a.url_norm > b.url_norm ? 1 : a.method < b.method ? -1 : 1,
  )) {
    const list = hosts.get(endpoint.host) ?? [];
    list.push(endpoint.key);
    hosts.set(endpoint.host, list);
  }
  return new Map([...hosts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}

type Recorder = (urlNorm: string, url: string, method: string, host: string) => SiteEndpoint;

/** The saves of the published run: every one has a receipt page, so its endpoint gets a page too. */
async function addSaves(
  runDir: string,
  record: Recorder,
  seen: Set<string>,
  receiptPages: Set<string>,
): Promise<void> {
  for (const save of (await readRunFile(runDir, 'saves.json', Saves)).saves) {
    const id = save.receipt?.id;
    if (id === undefined) continue;
    receiptPages.add(id);
    if (seen.has(id)) continue;
    seen.add(id);
    const urlNorm = normalizeUrl(save.url);
    const endpoint = record(urlNorm, save.url, save.method, new URL(urlNorm).host);
    endpoint.checks.push({
      at: save.timestamp,
      verdict: 'skip',
      reason: save.reason_code,
      price_usd: save.quoted_price_usd,
      pay_to: save.pay_to,
      network: save.network,
      receipt_id: id,
    });
  }
}

const Disputes = v.looseObject({
  disputes: v.array(
    v.looseObject({
      url_norm: v.string(),
      method: v.string(),
      fields: v.array(v.string()),
      listings: v.array(v.looseObject({})),
    }),
  ),
});

/** The listings of each disputed endpoint (`disputes.json`; absent in runs written before it existed). */
async function addDisputes(runDir: string, endpoints: Map<string, SiteEndpoint>): Promise<void> {
  if (!existsSync(join(runDir, 'disputes.json'))) return;
  for (const dispute of (await readRunFile(runDir, 'disputes.json', Disputes)).disputes) {
    const endpoint = endpoints.get(endpointKey(dispute.url_norm, dispute.method));
    if (endpoint?.listing != null) {
      endpoint.listing.disputed = dispute.fields;
      endpoint.listing.dispute_listings = dispute.listings;
    }
  }
}

const Delisted = v.looseObject({ delisted: v.array(v.unknown()) });

/** The delistings the published run still shows (`delisted.json`; absent in runs written before it existed). */
async function addDelistings(runDir: string, endpoints: Map<string, SiteEndpoint>): Promise<void> {
  if (!existsSync(join(runDir, 'delisted.json'))) return;
  const shown = shownDelistings((await readRunFile(runDir, 'delisted.json', Delisted)).delisted);
  for (const endpoint of endpoints.values())
    endpoint.delisted = shown.get(delistingKey(endpoint.url_norm, endpoint.method)) ?? null;
}

const TasksFile = v.looseObject({
  tasks: v.array(
    v.looseObject({
      name: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/)),
      title: v.optional(v.string()),
      description: v.string(),
      request: v.looseObject({ method: v.string() }),
      candidates: v.array(v.string()),
    }),
  ),
});
const PaidCallLine = v.looseObject({
  endpoint_url: v.string(),
  task: v.string(),
  known_answer: v.nullable(v.picklist(['pass', 'fail'])),
});
/**
 * The latest known-answer run (`DATA_DIR/known-answers/`): its tasks, and per candidate the pass rate of its paid
 * calls. Every candidate gets an endpoint page (with or without crawl checks), so task pages link only to pages.
 */
async function addKnownAnswers(
  dataDir: string,
  endpoints: Map<string, SiteEndpoint>,
  record: Recorder,
): Promise<{ tasks: TaskInfo[]; runId: string | null; paidCalls: PaidCallRecord[] }> {
  const run = await publishedRun(join(dataDir, 'known-answers'));
  if (run === null || !existsSync(join(run.dir, 'tasks.json')))
    return { tasks: [], runId: null, paidCalls: [] };
  const file = await readRunFile(run.dir, 'tasks.json', TasksFile);
  const counts = new Map<string, { calls: number; checked: number; passes: number }>();
  const paidCalls: PaidCallRecord[] = [];
  const callsFile = join(run.dir, 'paid-calls.ndjson');
  if (existsSync(callsFile)) {
    let n = 0;
    for await (const line of createInterface({
      input: createReadStream(callsFile, 'utf8'),
      crlfDelay: Infinity,
    })) {
      n++;
      if (line.trim() === '') continue;
      const json: unknown = JSON.parse(line);
      const call = parseFile(PaidCallLine, json, `${callsFile}:${n}`);
      const whole = paidCallOfLine(json);
      if (whole !== null) paidCalls.push(whole);
      const id = `${call.task} ${normalizeUrl(call.endpoint_url)}`;
      const c = counts.get(id) ?? { calls: 0, checked: 0, passes: 0 };
      c.calls++;
      if (call.known_answer !== null) c.checked++;
      if (call.known_answer === 'pass') c.passes++;
      counts.set(id, c);
    }
  }
  const tasks: TaskInfo[] = [];
  for (const task of file.tasks) {
    tasks.push({
      name: task.name,
      title: task.title ?? null,
      description: task.description,
      method: task.request.method,
      candidates: task.candidates,
    });
    for (const candidate of task.candidates) {
      let urlNorm: string;
      try {
        urlNorm = normalizeUrl(candidate);
      } catch {
        continue;
      }
      const endpoint =
        endpoints.get(endpointKey(urlNorm, task.request.method)) ??
        record(urlNorm, candidate, task.request.method, new URL(urlNorm).host);
      const c = counts.get(`${task.name} ${urlNorm}`) ?? { calls: 0, checked: 0, passes: 0 };
      endpoint.tasks.push({
        task: task.name,
        service_id: serviceIdOf(urlNorm),
        ...c,
        pass_rate: c.checked === 0 ? null : Math.round((c.passes / c.checked) * 10_000) / 10_000,
      });
    }
  }
  return { tasks, runId: run.runId, paidCalls };
}
