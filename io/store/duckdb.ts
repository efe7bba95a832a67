/**
 * The DuckDB store. Only the API server opens its database file (DuckDB allows one writing process and, while it
 * writes, no reader in another process: docs/architecture.md), so other processes hand data to the server through
 * the inbox (`io/inbox.ts`) instead of opening this file.
 *
 * Writes are queued and flushed in batches (`_duckdb-writer.ts`): the journal already made them durable, and a
 * multi-row insert costs about what a single one does.
 *
 * Opened with `bodies` (the live service), the rows of receipts the ledger writes as files (`bodyInFile`) keep an
 * empty body: the reads that answer bodies take them from `bodies` (`io/receipts/bodies.ts`, the port the ledger
 * keeps them in), so the index does not hold a second copy of every receipt (with 2.5 KB bodies, DuckDB's writes
 * and checkpoints of them were about a sixth of a cached check's CPU and half the service's peak RSS over a minute
 * of load: docs/performance.md). Crawl receipts keep their body here.
 *
 * This file holds the cache of each endpoint's observations, and wires the parts kept apart: the schema
 * (`_duckdb-schema.ts`), the writer (`_duckdb-writer.ts`), the flushed reads (`_duckdb-index-reads.ts`), listings
 * (`_duckdb-listings.ts`) and paid calls (`_duckdb-paid-calls.ts`).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { LIMITS } from '../../core/limits.ts';
import type { HttpMethod, Observation } from '../../core/model.ts';
import { coalesced, serialQueue } from '../duckdb/coalesce.ts';
import { type DuckDbLimits, openDuckDbInstance } from '../duckdb/instance.ts';
import { CHUNK, select } from '../duckdb/query.ts';
import { applySchema } from '../duckdb/schema.ts';
import type { ReceiptBodies } from '../receipts/bodies.ts';
import { createIndexWrites } from './_duckdb-index-writes.ts';
import { openListings } from './_duckdb-listings.ts';
import { openPaidCalls } from './_duckdb-paid-calls.ts';
import { createIndexReads } from './_duckdb-reads.ts';
import { createIndexWriter, type IndexWriter } from './_duckdb-writer.ts';
import { toStoredObservation } from './_rows.ts';
import { endpointOf, type Store } from './port.ts';

const LOADED_ENDPOINTS = 10_000;

/**
 * `bodies`: where the bodies of `bodyInFile` rows are read from; without it every row keeps its body in the index.
 * `limits`: the database's memory and threads (`io/duckdb/instance.ts`).
 */
export type DuckDbStoreOptions = { bodies?: ReceiptBodies; limits?: DuckDbLimits };

/** Opens (or creates) the database file and its schema. */
export async function openDuckDbStore(path: string, options: DuckDbStoreOptions = {}): Promise<Store> {
  const { bodies } = options;
  const readBody = bodies ? (id: string) => bodies.read(id) : null;
  const instance = await openDuckDbInstance(path, options.limits);
  const db = await instance.connect();
  await applySchema(db);
  const writer = createIndexWriter(await createIndexWrites(db));
  // Imports run their transaction on a connection of their own, so index writes made meanwhile on `db` are never
  // part of it (nor lost with its rollback).
  const importDb = await instance.connect();
  const listings = await openListings(db, importDb);
  // A crawl run's rows go in on a connection of their own too, committed apart from the live queue, so a read
  // (which flushes that queue first) never waits behind thousands of them.
  const runDb = await instance.connect();
  const runWrites = await createIndexWrites(runDb);
  let runImport: Promise<unknown> = Promise.resolve();
  // The receipt reads (by id, by URL, the list) query a connection that never writes: on the writing one they would
  // wait for the statement under way (a pass of the live queue). They do not flush either: each adds the rows the
  // writer has not committed yet, so none waits for a pass or for a run chunk holding the writer's turn.
  const readDb = await instance.connect();
  const paidCalls = await openPaidCalls(db);
  const observations = await openObservationCache(db, writer);
  const reads = createIndexReads(db, readDb, writer, readBody);

  const store: Store = {
    indexReceipts(rows) {
      writer.receipts(readBody ? rows.map((row) => (row.bodyInFile ? { ...row, bodyJson: '' } : row)) : rows);
    },
    addObservation(urlNorm, method, observation) {
      observations.add(urlNorm, method, observation);
      writer.observation([urlNorm, method, observation]);
    },
    importRunRows(receipts, rows) {
      const run = runImport.then(async () => {
        for (const [urlNorm, method, observation] of rows) observations.add(urlNorm, method, observation);
        const release = writer.hold(rows);
        try {
          await writer.exclusive(async () => {
            await runWrites.receipts(receipts);
            await runWrites.observations(rows);
          });
        } finally {
          release();
        }
      });
      runImport = run.catch(() => {});
      return run;
    },
    observations: observations.read,
    receipt: reads.receipt,
    latestReceiptByUrl: reads.latestReceiptByUrl,
    listReceipts: reads.listReceipts,
    listing: listings.listing,
    endpoint: (urlNorm, method) => endpointOf(store, urlNorm, method),
    importListings: listings.importListings,
    addPaidCall: paidCalls.addPaidCall,
    paidCalls: paidCalls.paidCalls,
    observationsByHost: reads.observationsByHost,
    checksByHost: reads.checksByHost,
    publicChecksByHost: reads.publicChecksByHost,
    flush: writer.flush,
    async close() {
      await writer.flush();
      await runImport;
      runDb.closeSync();
      readDb.closeSync();
      importDb.closeSync();
      db.closeSync();
      instance.closeSync();
    },
  };
  return store;
}

/** The newest observations of the endpoints read lately, kept in step with the ones added. */
type ObservationCache = {
  add(urlNorm: string, method: HttpMethod, observation: Observation): void;
  read(urlNorm: string, method: HttpMethod): Promise<Observation[]>;
};

const key = (urlNorm: string, method: HttpMethod) => `${method} ${urlNorm}`;

async function openObservationCache(db: DuckDBConnection, writer: IndexWriter): Promise<ObservationCache> {
  const loaded = new Map<string, Observation[]>();
  const loading = new Map<string, Promise<Observation[]>>();
  // Endpoints with at least one observation in the table: a check of a new endpoint needs no query at all.
  const known = new Set(
    (await select(db, 'SELECT DISTINCT method, url_norm FROM observations', [])).map((row) =>
      key(String(row.url_norm), row.method === 'POST' ? 'POST' : 'GET'),
    ),
  );
  // Histories not in memory are read many at once: the watcher asks for hundreds at a time, and one statement per
  // endpoint scanned the whole table each (io/duckdb/coalesce.ts).
  const stored = coalesced(serialQueue(), (asks: Array<{ urlNorm: string; method: HttpMethod }>) =>
    storedHistories(db, asks),
  );
  const load = async (urlNorm: string, method: HttpMethod, k: string): Promise<Observation[]> => {
    // No flush: what the table does not hold yet is still in the queue, and is merged in below.
    const rows = known.has(k) ? await stored({ urlNorm, method }) : [];
    const byTime = new Map<string, Observation>();
    for (const item of [...rows, ...writer.unflushed(urlNorm, method)]) byTime.set(item.observed_at, item);
    const list = [...byTime.values()]
      .sort((a, b) => b.observed_at.localeCompare(a.observed_at))
      .slice(0, LIMITS.historyKept);
    if (loaded.size >= LOADED_ENDPOINTS) loaded.delete(loaded.keys().next().value as string);
    // An observation added while the query ran was pushed to the queue, and read by `unflushed` above.
    if (!loaded.has(k)) loaded.set(k, list);
    return loaded.get(k)!;
  };
  return {
    add(urlNorm, method, observation) {
      known.add(key(urlNorm, method));
      const list = loaded.get(key(urlNorm, method));
      if (list) {
        list.unshift(observation);
        list.sort((a, b) => b.observed_at.localeCompare(a.observed_at));
        list.length = Math.min(list.length, LIMITS.historyKept);
      }
    },
    async read(urlNorm, method) {
      const k = key(urlNorm, method);
      const hit = loaded.get(k);
      if (hit) return [...hit];
      let pending = loading.get(k);
      if (!pending) {
        pending = load(urlNorm, method, k).finally(() => loading.delete(k));
        loading.set(k, pending);
      }
      return [...(await pending)];
    },
  };
}

/**
 * The newest {@link LIMITS.historyKept} stored observations of each endpoint asked, in one statement per
 * {@link CHUNK} endpoints; each ask gets its own (by its row of `VALUES`), in no particular order.
 */
async function storedHistories(
  db: DuckDBConnection,
  asks: Array<{ urlNorm: string; method: HttpMethod }>,
): Promise<Observation[][]> {
  const found: Observation[][] = asks.map(() => []);
  for (let start = 0; start < asks.length; start += CHUNK) {
    const part = asks.slice(start, start + CHUNK);
    const rows = await select(
      db,
      `SELECT a.ask, o.observed_at, o.http_status, o.price_usd, o.amount_atomic, o.network, o.asset, o.pay_to
       FROM observations o JOIN (VALUES ${part.map(() => '(?, ?, ?)').join(', ')}) a(ask, url_norm, method)
         ON o.url_norm = a.url_norm AND o.method = a.method
       QUALIFY row_number() OVER (PARTITION BY a.ask ORDER BY o.observed_at DESC) <= ${LIMITS.historyKept}`,
      part.flatMap((a, i) => [start + i, a.urlNorm, a.method]),
    );
    for (const r of rows) found[Number(r.ask)]?.push(toStoredObservation(r));
  }
  return found;
}
