/**
 * The DuckDB store. Only the API server opens its database file (DuckDB allows one writing process and, while it
 * writes, no reader in another process: stack-notes Gotcha 5), so other processes hand data to the server through
 * the inbox (`io/inbox.ts`) instead of opening this file.
 *
 * Writes are queued and flushed in batches: the journal already made them durable, and a multi-row insert costs
 * about what a single one does.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import type { HttpMethod, Listing, Observation } from '../core/model.ts';
import { isPublicState } from '../core/public-state.ts';
import type { HostObservation } from '../core/reputation.ts';
import {
  serialFlush,
  toHostCheck,
  toListing,
  toPaidCall,
  toReceiptSummary,
  toStoredObservation,
} from './_store-rows.ts';
import { createIndexWrites, type ObservationRow, storedDouble } from './duckdb-index-writes.ts';
import { createRecentPaidCalls, RECENT_KEPT, type RecentPaidCalls } from './recent-paid-calls.ts';
import {
  hostOf,
  OBSERVATIONS_KEPT,
  type Page,
  pickListing,
  type ReceiptRow,
  type ReceiptSummary,
  type Store,
} from './store.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS receipts (
  id VARCHAR PRIMARY KEY, type VARCHAR NOT NULL, issued_at VARCHAR NOT NULL, url VARCHAR, url_norm VARCHAR,
  method VARCHAR, verdict VARCHAR, reason VARCHAR, check_type VARCHAR, mode VARCHAR, tier VARCHAR, body VARCHAR NOT NULL,
  public_state BOOLEAN);
CREATE INDEX IF NOT EXISTS receipts_by_url ON receipts (url_norm);
CREATE TABLE IF NOT EXISTS observations (
  url_norm VARCHAR NOT NULL, method VARCHAR NOT NULL, observed_at VARCHAR NOT NULL, http_status INTEGER,
  price_usd DOUBLE, amount_atomic VARCHAR, network VARCHAR, asset VARCHAR, pay_to VARCHAR,
  PRIMARY KEY (url_norm, method, observed_at));
CREATE TABLE IF NOT EXISTS listings (
  url_norm VARCHAR NOT NULL, method VARCHAR NOT NULL, url VARCHAR NOT NULL, price_usd DOUBLE, network VARCHAR,
  asset VARCHAR, pay_to VARCHAR, source VARCHAR NOT NULL, PRIMARY KEY (url_norm, method, source));
CREATE TABLE IF NOT EXISTS paid_calls (
  service_id VARCHAR NOT NULL, endpoint_url VARCHAR NOT NULL, host VARCHAR, task VARCHAR NOT NULL,
  called_at VARCHAR NOT NULL, price_atomic VARCHAR NOT NULL, network VARCHAR NOT NULL, pay_to VARCHAR NOT NULL,
  settlement_tx VARCHAR, delivered BOOLEAN NOT NULL, known_answer VARCHAR, http_status INTEGER,
  broken_on_seller_side BOOLEAN NOT NULL);
ALTER TABLE paid_calls ADD COLUMN IF NOT EXISTS receipt_id VARCHAR;
ALTER TABLE paid_calls ADD COLUMN IF NOT EXISTS why VARCHAR;
CREATE INDEX IF NOT EXISTS paid_calls_by_service ON paid_calls (service_id);
`;

const PAID_CALL_COLUMNS =
  'service_id, endpoint_url, host, task, called_at, price_atomic, network, pay_to, settlement_tx, delivered, ' +
  'known_answer, http_status, broken_on_seller_side, receipt_id, why';

const CHUNK = 200;
/** Listings the in-memory cache takes between two yields to the event loop while an import replaces it. */
const LISTING_SLICE = 2000;
/** The index trails the journal by at most this much; fewer, larger commits keep DuckDB's own fsyncs from
 *  slowing the journal's (bench/journal.ts measured a 4-5x slowdown at a 25 ms interval). */
const FLUSH_EVERY_MS = 1000;
const FLUSH_AT_ROWS = 5000;
const LOADED_ENDPOINTS = 10_000;

/** Opens (or creates) the database file and its schema. */
export async function openDuckDbStore(path: string): Promise<Store> {
  const instance = await DuckDBInstance.create(path);
  const db = await instance.connect();
  await db.run(SCHEMA);
  await addPublicState(db);
  await addHostColumns(db);
  const writes = await createIndexWrites(db);
  // Imports run their transaction on a connection of their own, so index writes made meanwhile on `db` are never
  // part of it (nor lost with its rollback).
  const importDb = await instance.connect();

  let receiptQueue: ReceiptRow[] = [];
  let observationQueue: ObservationRow[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const loaded = new Map<string, Observation[]>();
  const loading = new Map<string, Promise<Observation[]>>();
  let listings = await loadListings(db);
  const recentCalls = await loadRecentPaidCalls(db);
  const key = (urlNorm: string, method: HttpMethod) => `${method} ${urlNorm}`;

  // Endpoints with at least one observation in the table: a check of a new endpoint needs no query at all.
  const known = new Set(
    (await select(db, 'SELECT DISTINCT method, url_norm FROM observations', [])).map((row) =>
      key(String(row.url_norm), row.method === 'POST' ? 'POST' : 'GET'),
    ),
  );
  let inFlight: ObservationRow[] = [];

  // One pass over what is queued when it starts: a flush waits for the rows queued before it, never for rows that
  // keep arriving under load (a loop until the queues are empty never ends while checks keep coming).
  const drain = async (): Promise<void> => {
    const receipts = receiptQueue;
    inFlight = observationQueue;
    receiptQueue = [];
    observationQueue = [];
    await writes.receipts(receipts);
    await writes.observations(inFlight);
    inFlight = [];
  };
  /** Observations of one endpoint not yet in the table (queued, or being inserted right now). */
  const unflushed = (k: string) =>
    [...inFlight, ...observationQueue].filter(([u, m]) => key(u, m) === k).map(([, , o]) => o);
  const serial = serialFlush(drain, () => receiptQueue.length > 0 || observationQueue.length > 0);
  const flush = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    await serial.flush();
  };
  const schedule = () => {
    timer ??= setTimeout(() => {
      timer = null;
      flush().catch((error: unknown) => console.error('[spotcheck] [store] index flush failed', error));
    }, FLUSH_EVERY_MS);
    if (receiptQueue.length + observationQueue.length >= FLUSH_AT_ROWS) void flush().catch(() => {});
  };

  let importing: Promise<unknown> = Promise.resolve();
  /** Replaces the listings of each source in `rows`, in the table and then in the cache. */
  const importNow = async (rows: Parameters<Store['importListings']>[0]): Promise<number> => {
    const sources = [...new Set(rows.map((row) => row.source))];
    await importDb.run('BEGIN TRANSACTION');
    try {
      for (const source of sources) await importDb.run('DELETE FROM listings WHERE source = ?', [source]);
      for (let i = 0; i < rows.length; i += CHUNK) await insertListings(importDb, rows.slice(i, i + CHUNK));
      await importDb.run('COMMIT');
    } catch (error) {
      await importDb.run('ROLLBACK');
      throw error;
    }
    // The cache follows the same replacement in memory: reading every listing back would hold the event loop
    // for as long as the conversion of the whole table takes (bench/crawl-ingest.ts). The new cache is built
    // beside the old one a slice at a time, then takes its place at once: a check meanwhile sees the old listings
    // or the new ones, never a mix.
    const replaced = new Set(sources);
    const next = new Map<string, Listing[]>();
    let n = 0;
    for (const [url, list] of listings) {
      const kept = list.some((l) => replaced.has(l.source))
        ? list.filter((l) => !replaced.has(l.source))
        : list;
      if (kept.length > 0) next.set(url, kept);
      if (++n % LISTING_SLICE === 0) await yieldToEventLoop();
    }
    const unique = new Map(rows.map((l) => [`${l.source}\u0000${l.method}\u0000${l.urlNorm}`, l]));
    for (const l of unique.values()) {
      const list = next.get(l.urlNorm);
      const listing: Listing = {
        url: l.url,
        method: l.method,
        priceUsd: storedDouble(l.priceUsd),
        network: l.network,
        asset: l.asset,
        payTo: l.payTo,
        source: l.source,
      };
      // A list shared with the old cache is copied before it changes.
      next.set(l.urlNorm, list === undefined ? [listing] : [...list, listing]);
      if (++n % LISTING_SLICE === 0) await yieldToEventLoop();
    }
    listings = next;
    return rows.length;
  };

  return {
    indexReceipts(rows) {
      receiptQueue.push(...rows);
      schedule();
    },
    addObservation(urlNorm, method, observation) {
      observationQueue.push([urlNorm, method, observation]);
      known.add(key(urlNorm, method));
      const list = loaded.get(key(urlNorm, method));
      if (list) {
        list.unshift(observation);
        list.sort((a, b) => b.observed_at.localeCompare(a.observed_at));
        list.length = Math.min(list.length, OBSERVATIONS_KEPT);
      }
      schedule();
    },
    async observations(urlNorm, method) {
      const k = key(urlNorm, method);
      const hit = loaded.get(k);
      if (hit) return [...hit];
      let pending = loading.get(k);
      if (!pending) {
        pending = (async () => {
          // No flush: what the table does not hold yet is still in the queue, and is merged in below.
          const rows = known.has(k)
            ? await select(
                db,
                `SELECT observed_at, http_status, price_usd, amount_atomic, network, asset, pay_to FROM observations
                 WHERE url_norm = ? AND method = ? ORDER BY observed_at DESC LIMIT ${OBSERVATIONS_KEPT}`,
                [urlNorm, method],
              )
            : [];
          const byTime = new Map<string, Observation>();
          for (const item of [...rows.map(toStoredObservation), ...unflushed(k)])
            byTime.set(item.observed_at, item);
          const list = [...byTime.values()]
            .sort((a, b) => b.observed_at.localeCompare(a.observed_at))
            .slice(0, OBSERVATIONS_KEPT);
          if (loaded.size >= LOADED_ENDPOINTS) loaded.delete(loaded.keys().next().value as string);
          // An observation added while the query ran was pushed to the queue, and read by `unflushed` above.
          if (!loaded.has(k)) loaded.set(k, list);
          return loaded.get(k)!;
        })().finally(() => loading.delete(k));
        loading.set(k, pending);
      }
      return [...(await pending)];
    },
    async receipt(id) {
      await flush();
      const rows = await select(db, 'SELECT body FROM receipts WHERE id = ?', [id]);
      return rows[0] ? (JSON.parse(String(rows[0].body)) as Record<string, unknown>) : null;
    },
    async latestReceiptByUrl(urlNorm) {
      await flush();
      const rows = await select(
        db,
        `SELECT body FROM receipts WHERE url_norm = ? AND public_state ORDER BY issued_at DESC, id DESC LIMIT 1`,
        [urlNorm],
      );
      return rows[0] ? (JSON.parse(String(rows[0].body)) as Record<string, unknown>) : null;
    },
    async listReceipts({ mode, page, pageSize }): Promise<Page<ReceiptSummary>> {
      await flush();
      const where = mode ? 'WHERE mode = ?' : '';
      const args = mode ? [mode] : [];
      const total = await select(db, `SELECT count(*)::INTEGER AS n FROM receipts ${where}`, args);
      const rows = await select(
        db,
        `SELECT id, type, issued_at, url, method, verdict, reason, check_type, mode, tier FROM receipts ${where}
         ORDER BY issued_at DESC, id DESC LIMIT ${pageSize} OFFSET ${(page - 1) * pageSize}`,
        args,
      );
      return { items: rows.map(toReceiptSummary), total: Number(total[0]?.n ?? 0), page, pageSize };
    },
    async listing(urlNorm, method) {
      return pickListing(listings.get(urlNorm) ?? [], method);
    },
    importListings(rows) {
      // One import at a time: each is a transaction on `importDb`, and each rebuilds the cache from the last one's.
      const run = importing.then(() => importNow(rows));
      importing = run.catch(() => {});
      return run;
    },
    async addPaidCall(r) {
      // Idempotent by receipt: a run taken in again (after a restart) replaces its rows, never doubles them.
      if (r.receipt_id !== null) await db.run('DELETE FROM paid_calls WHERE receipt_id = ?', [r.receipt_id]);
      await db.run(
        `INSERT INTO paid_calls (${PAID_CALL_COLUMNS}) VALUES (${Array(15).fill('?').join(',')})`,
        [
          r.service_id,
          r.endpoint_url,
          hostOf(r.endpoint_url),
          r.task,
          r.called_at,
          r.price_atomic,
          r.network,
          r.pay_to,
          r.settlement_tx,
          r.delivered,
          r.known_answer,
          r.http_status,
          r.broken_on_seller_side,
          r.receipt_id,
          r.why,
        ],
      );
      recentCalls.add(r);
    },
    async paidCalls({ task, endpoint, host, perService }) {
      const recent = recentCalls.query({
        ...(task === undefined ? {} : { task }),
        ...(endpoint === undefined ? {} : { endpoint }),
        ...(host === undefined ? {} : { host }),
        perService,
      });
      if (recent !== null) return recent;
      const where: string[] = [];
      const args: DuckDBValue[] = [];
      if (task !== undefined) {
        where.push('task = ?');
        args.push(task);
      }
      if (endpoint !== undefined) {
        where.push('(service_id = ? OR endpoint_url = ?)');
        args.push(endpoint, endpoint);
      }
      if (host !== undefined) {
        where.push('host = ?');
        args.push(host);
      }
      // newestFirst (core/catalog.ts): time, then settlement transaction, both descending.
      const order = "called_at DESC, coalesce(settlement_tx, '') DESC";
      const rows = await select(
        db,
        `SELECT * EXCLUDE (host) FROM paid_calls ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         QUALIFY row_number() OVER (PARTITION BY service_id ORDER BY ${order}) <= ${Math.max(0, Math.floor(perService))}
         ORDER BY ${order}, service_id`,
        args,
      );
      return rows.map(toPaidCall);
    },
    async observationsByHost(host, limit) {
      await flush();
      const rows = await select(
        db,
        `SELECT method || ' ' || url_norm AS endpoint, observed_at, http_status, price_usd, amount_atomic, network, asset,
           pay_to FROM observations WHERE host = ?
         QUALIFY row_number() OVER (PARTITION BY url_norm, method ORDER BY observed_at DESC) <= ${OBSERVATIONS_KEPT}
         ORDER BY observed_at DESC, endpoint LIMIT ${Math.max(0, Math.floor(limit))}`,
        [host],
      );
      return rows.map(
        (row): HostObservation => ({ ...toStoredObservation(row), endpoint: String(row.endpoint) }),
      );
    },
    async checksByHost(host, limit) {
      await flush();
      const rows = await select(
        db,
        `SELECT verdict, reason, issued_at, body FROM receipts
         WHERE host = ? AND type = 'check' AND verdict IS NOT NULL
         ORDER BY issued_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
        [host],
      );
      return rows.map(toHostCheck);
    },
    async publicChecksByHost(host, limit) {
      await flush();
      const rows = await select(
        db,
        `SELECT body FROM receipts
         WHERE host = ? AND public_state
         ORDER BY issued_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
        [host],
      );
      return rows.map((row) => JSON.parse(String(row.body)) as Record<string, unknown>);
    },
    flush,
    async close() {
      await flush();
      importDb.closeSync();
      db.closeSync();
      instance.closeSync();
    },
  };
}

/** Doubles are bound as text and cast in SQL: the driver binds an integer-valued number as BIGINT, which
 *  overflows for a price such as 1e71 that a hostile challenge can produce. */
function double(value: number | null): string | null {
  return value === null || !Number.isFinite(value) ? null : String(value);
}

/** Runs a query and returns its rows as plain objects. */
export async function select(db: DuckDBConnection, sql: string, values: DuckDBValue[]) {
  const reader = await db.runAndReadAll(sql, values);
  return reader.getRowObjectsJS() as Array<Record<string, unknown>>;
}

/**
 * Databases made before `public_state` existed get the column, filled from each receipt by the one rule
 * (`core/public-state.ts`): the rule reads the signed receipt, so SQL never restates it.
 */
async function addPublicState(db: DuckDBConnection): Promise<void> {
  await db.run('ALTER TABLE receipts ADD COLUMN IF NOT EXISTS public_state BOOLEAN');
  for (;;) {
    const rows = await select(db, 'SELECT id, body FROM receipts WHERE public_state IS NULL LIMIT 1000', []);
    if (rows.length === 0) return;
    const [yes, no] = [[] as string[], [] as string[]];
    for (const row of rows) (isPublicState(JSON.parse(String(row.body))) ? yes : no).push(String(row.id));
    for (const [ids, value] of [
      [yes, true],
      [no, false],
    ] as const) {
      if (ids.length === 0) continue;
      await db.run(
        `UPDATE receipts SET public_state = ${value} WHERE id IN (${ids.map(() => '?').join(',')})`,
        ids,
      );
    }
  }
}

/**
 * The `host` column of receipts and observations (`hostOf`, the port's one rule for a URL's host), indexed, so the
 * reputation and badge queries of one host read that host's rows only. Databases made before it get the column,
 * filled once from their normalized URLs.
 */
async function addHostColumns(db: DuckDBConnection): Promise<void> {
  for (const table of ['receipts', 'observations']) {
    await db.run(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS host VARCHAR`);
    const urls = await select(
      db,
      `SELECT DISTINCT url_norm FROM ${table} WHERE host IS NULL AND url_norm IS NOT NULL`,
      [],
    );
    const pairs = urls.flatMap((row) => {
      const host = hostOf(String(row.url_norm));
      return host === null ? [] : [[String(row.url_norm), host]];
    });
    for (let i = 0; i < pairs.length; i += CHUNK) {
      const chunk = pairs.slice(i, i + CHUNK);
      await db.run(
        `UPDATE ${table} SET host = m.host FROM (VALUES ${chunk.map(() => '(?, ?)').join(',')}) AS m(url_norm, host)
         WHERE ${table}.url_norm = m.url_norm AND ${table}.host IS NULL`,
        chunk.flat(),
      );
    }
    await db.run(`CREATE INDEX IF NOT EXISTS ${table}_by_host ON ${table} (host)`);
  }
}

async function insertListings(db: DuckDBConnection, rows: Array<Listing & { urlNorm: string }>) {
  if (rows.length === 0) return;
  const values: DuckDBValue[] = [];
  for (const l of rows)
    values.push(l.urlNorm, l.method, l.url, double(l.priceUsd), l.network, l.asset, l.payTo, l.source);
  const tuple = '(?, ?, ?, CAST(? AS DOUBLE), ?, ?, ?, ?)';
  await db.run(`INSERT OR REPLACE INTO listings VALUES ${rows.map(() => tuple).join(',')}`, values);
}

async function loadListings(db: DuckDBConnection): Promise<Map<string, Listing[]>> {
  const rows = await select(db, 'SELECT * FROM listings', []);
  const byUrl = new Map<string, Listing[]>();
  for (const row of rows) {
    const listing = toListing(row);
    const list = byUrl.get(String(row.url_norm)) ?? [];
    list.push(listing);
    byUrl.set(String(row.url_norm), list);
  }
  return byUrl;
}

/** The last {@link RECENT_KEPT} calls of every service and of every service and task, from the table. */
async function loadRecentPaidCalls(db: DuckDBConnection): Promise<RecentPaidCalls> {
  const recent = createRecentPaidCalls();
  const order = "called_at DESC, coalesce(settlement_tx, '') DESC";
  const rows = await select(
    db,
    `SELECT * EXCLUDE (host) FROM paid_calls
     QUALIFY row_number() OVER (PARTITION BY service_id ORDER BY ${order}) <= ${RECENT_KEPT}
          OR row_number() OVER (PARTITION BY service_id, task ORDER BY ${order}) <= ${RECENT_KEPT}`,
    [],
  );
  for (const row of rows) recent.add(toPaidCall(row));
  return recent;
}
