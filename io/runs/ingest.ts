/**
 * How the running server takes in a published crawl run without a restart: it watches
 * `crawl/current.json`, and for a run it has not taken in yet indexes the run's signed receipts (so they answer by
 * id and by URL), adds their observations to each endpoint's history, and imports `listings.json` as the
 * expectations of the live check. Every step that is proportional to the run (parsing the index and the listings,
 * reading receipts) is done in batches that yield to the event loop, and the receipts' batches rest as long as they
 * took, so checks keep being answered while a large run goes in (bench/crawl-ingest.ts). The server's own marker
 * (`crawl/ingested.json`) is written last: after a crash mid-way the run is taken in again (receipts are idempotent
 * by id).
 */

import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep, setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type ListingRow, MAX_LISTINGS, parseListings } from '../../core/listings.ts';
import type { HttpMethod, Observation } from '../../core/model.ts';
import { isReceiptId } from '../../core/receipt.ts';
import type { ObservationRow, ReceiptRow, Store } from '../store/port.ts';
import {
  publishedRunDir,
  type RunPaths,
  readJsonRecord,
  readJsonValue,
  readNdjson,
  readPointer,
} from './paths.ts';

/** Receipt files read between two yields to the event loop (about 2 ms of reads from the page cache). */
const READ_SLICE = 50;
/** Receipts per import into the store: each is one commit of about 3 MB. */
const IMPORT_ROWS = 1000;
/** Listing records validated between two yields to the event loop. */
const PARSE_SLICE = 100;
/**
 * After each import of {@link IMPORT_ROWS} receipts the ingest rests as long as it took, so a run goes in using at
 * most about half of the server's time while checks are answered (docs/decisions.md "Crawl receipts").
 */
const REST_PER_WORK = 1;

type IndexLine = {
  id: string;
  url: string;
  url_norm: string;
  method: HttpMethod;
  issued_at: string;
  verdict: string;
  reason: string;
  observation: Observation | null;
};

/** An endpoint a run found no source lists any more (`delisted.json`, `core/delisting.ts`), for the watches. */
export type RunDelisting = {
  url: string;
  method: HttpMethod;
  runId: string;
  sourceList: string;
  delistedAt: string;
};

/**
 * The endpoints run `runId` delisted itself (`delisted.json` also shows older delistings, which earlier runs
 * reported); none when the run has no such file (runs from before delisting).
 */
export async function freshDelistings(paths: RunPaths, runId: string): Promise<RunDelisting[]> {
  const file = await readJsonRecord(join(publishedRunDir(paths, runId), 'delisted.json'));
  const entries = Array.isArray(file?.['delisted']) ? (file['delisted'] as unknown[]) : [];
  const fresh: RunDelisting[] = [];
  for (const value of entries) {
    const entry = value as Record<string, unknown> | null;
    if (entry === null || typeof entry !== 'object' || entry['delisted_in_run'] !== runId) continue;
    const { url, method, source_list: sourceList, delisted_at: delistedAt } = entry;
    if (typeof url !== 'string' || (method !== 'GET' && method !== 'POST')) continue;
    fresh.push({
      url,
      method,
      runId,
      sourceList: typeof sourceList === 'string' ? sourceList : '',
      delistedAt: typeof delistedAt === 'string' ? delistedAt : '',
    });
  }
  return fresh;
}

/** Takes one published run into the store; returns how many receipts and listings went in. */
export async function ingestRun(
  store: Store,
  paths: RunPaths,
  runId: string,
): Promise<{ receipts: number; listings: number }> {
  const dir = publishedRunDir(paths, runId);
  const lines = (await readNdjson(join(dir, 'receipts.ndjson'))).filter(isIndexLine);
  let receipts = 0;
  for (let i = 0; i < lines.length; i += IMPORT_ROWS) {
    const began = performance.now();
    const { rows, observations } = await readReceiptRows(dir, lines.slice(i, i + IMPORT_ROWS));
    await store.importRunRows(rows, observations);
    receipts += rows.length;
    await sleep((performance.now() - began) * REST_PER_WORK);
  }
  let listings = 0;
  const rows = await parseListingsInBatches(await readJsonValue(join(dir, 'listings.json')), runId);
  if (rows.length > 0) listings = await store.importListings(rows);
  return { receipts, listings };
}

/**
 * The rows of `lines`' receipts and their observations. The files are read synchronously, a slice at a time between
 * yields: they were just written and sit in the page cache, and thousands of asynchronous reads queued on libuv's
 * four threads made the journal's fdatasync, and with it every check's answer, wait behind them.
 */
async function readReceiptRows(
  dir: string,
  lines: IndexLine[],
): Promise<{ rows: ReceiptRow[]; observations: ObservationRow[] }> {
  const rows: ReceiptRow[] = [];
  const observations: ObservationRow[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (i % READ_SLICE === 0 && i > 0) await yieldToEventLoop();
    const line = lines[i] as IndexLine;
    const body = readRecordSync(join(dir, 'receipts', `${line.id}.json`));
    if (body === null || body['id'] !== line.id) continue;
    rows.push({
      id: line.id,
      type: 'check',
      issuedAt: line.issued_at,
      url: line.url,
      urlNorm: line.url_norm,
      method: line.method,
      verdict: line.verdict,
      reason: line.reason,
      checkType: 'dry-run',
      mode: 'live',
      tier: 'crawl',
      body,
    });
    if (typeof line.observation === 'object' && line.observation !== null)
      observations.push([line.url_norm, line.method, line.observation]);
  }
  return { rows, observations };
}

function readRecordSync(path: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** `listings.json` validated by the one rule (`parseListings`) a batch at a time; the first bad record throws. */
async function parseListingsInBatches(value: unknown, runId: string): Promise<ListingRow[]> {
  const whole = Array.isArray(value) ? null : parseListings(value);
  if (whole !== null && !whole.ok) throw new Error(`listings.json of run ${runId}: ${whole.message}`);
  const records = value as unknown[];
  if (records.length > MAX_LISTINGS)
    throw new Error(`listings.json of run ${runId}: at most ${MAX_LISTINGS} records`);
  const rows: ListingRow[] = [];
  for (let i = 0; i < records.length; i += PARSE_SLICE) {
    const parsed = parseListings(records.slice(i, i + PARSE_SLICE));
    if (!parsed.ok) throw new Error(`listings.json of run ${runId}: from record ${i}: ${parsed.message}`);
    for (const row of parsed.rows) rows.push(row);
    await yieldToEventLoop();
  }
  return rows;
}

/**
 * Polls `current.json` every `intervalMs` and takes in each newly published run. `poll()` runs one round now
 * (tests, start-up); errors are logged and retried at the next round.
 */
export function watchPublishedRuns(options: {
  store: Store;
  paths: RunPaths;
  intervalMs?: number;
  log: (line: string) => void;
  /** Told of the endpoints the run delisted, before the run is marked taken in (a failure retries the run). */
  onDelisted?: (delisted: RunDelisting[]) => Promise<void>;
}): { poll(): Promise<void>; stop(): void } {
  const marker = join(options.paths.root, 'ingested.json');
  let running: Promise<void> = Promise.resolve();
  const round = async () => {
    const pointer = await readPointer(options.paths);
    if (pointer === null) return;
    const done = (await readJsonRecord(marker))?.['run_id'];
    if (done === pointer.run_id) return;
    const took = await ingestRun(options.store, options.paths, pointer.run_id);
    const delisted = options.onDelisted ? await freshDelistings(options.paths, pointer.run_id) : [];
    if (delisted.length > 0) await options.onDelisted?.(delisted);
    await writeFile(marker, `${JSON.stringify({ run_id: pointer.run_id })}\n`);
    options.log(
      `took in crawl run ${pointer.run_id}: ${took.receipts} receipts, ${took.listings} listings, ${delisted.length} delisted`,
    );
  };
  const poll = () => {
    running = running
      .then(round)
      .catch((error: unknown) => options.log(`crawl run not taken in yet: ${String(error)}`));
    return running;
  };
  const timer = setInterval(poll, options.intervalMs ?? 2000);
  timer.unref();
  return { poll, stop: () => clearInterval(timer) };
}

function isIndexLine(value: unknown): value is IndexLine {
  const line = value as Partial<IndexLine> | null;
  return (
    line !== null &&
    typeof line === 'object' &&
    isReceiptId(line.id) &&
    typeof line.url === 'string' &&
    typeof line.url_norm === 'string' &&
    (line.method === 'GET' || line.method === 'POST') &&
    typeof line.issued_at === 'string'
  );
}
