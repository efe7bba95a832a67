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

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep, setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type ListingRow, MAX_LISTINGS, parseListings } from '../../core/listings.ts';
import type { HttpMethod, Observation } from '../../core/model.ts';
import { isReceiptId } from '../../core/receipt.ts';
import type { ReceiptRow, Store } from '../store/port.ts';
import {
  publishedRunDir,
  type RunPaths,
  readJsonRecord,
  readJsonValue,
  readNdjson,
  readPointer,
} from './paths.ts';

/** Receipts handled per batch before yielding to the event loop. */
const BATCH = 200;
/** Batches of receipts per index commit while a run is taken in (1,000 receipts, about 3 MB). */
const COMMIT_EVERY_BATCHES = 5;
/**
 * After each batch of receipts the ingest rests as long as the batch took, so a run goes in using at most about half
 * of the server's time while checks are answered. bench/crawl-ingest.ts, 9 alternating pairs: the slowest answer
 * during a 10,000-receipt ingest 52.5–69.3 ms with the rest, 57.8–114 ms without; the ingest 6.4–7.5 s, not 4.2–5.4.
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
  for (let i = 0; i < lines.length; i += BATCH) {
    const began = performance.now();
    const batch = lines.slice(i, i + BATCH);
    const rows: ReceiptRow[] = [];
    await Promise.all(
      batch.map(async (line) => {
        const body = await readJsonRecord(join(dir, 'receipts', `${line.id}.json`));
        if (body === null || body['id'] !== line.id) return;
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
          store.addObservation(line.url_norm, line.method, line.observation);
      }),
    );
    store.indexReceipts(rows);
    receipts += rows.length;
    // Committed every few batches rather than in one large flush: each commit syncs the index's own log, and a
    // sync of megabytes held up the journal's fdatasync, so every check answered meanwhile waited for it.
    if ((i / BATCH) % COMMIT_EVERY_BATCHES === COMMIT_EVERY_BATCHES - 1) await store.flush();
    await sleep((performance.now() - began) * REST_PER_WORK);
  }
  let listings = 0;
  const rows = await parseListingsInBatches(await readJsonValue(join(dir, 'listings.json')), runId);
  if (rows.length > 0) listings = await store.importListings(rows);
  await store.flush();
  return { receipts, listings };
}

/** `listings.json` validated by the one rule (`parseListings`) a batch at a time; the first bad record throws. */
async function parseListingsInBatches(value: unknown, runId: string): Promise<ListingRow[]> {
  const whole = Array.isArray(value) ? null : parseListings(value);
  if (whole !== null && !whole.ok) throw new Error(`listings.json of run ${runId}: ${whole.message}`);
  const records = value as unknown[];
  if (records.length > MAX_LISTINGS)
    throw new Error(`listings.json of run ${runId}: at most ${MAX_LISTINGS} records`);
  const rows: ListingRow[] = [];
  for (let i = 0; i < records.length; i += BATCH * 5) {
    const parsed = parseListings(records.slice(i, i + BATCH * 5));
    if (!parsed.ok) throw new Error(`listings.json of run ${runId}: from record ${i}: ${parsed.message}`);
    rows.push(...parsed.rows);
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
