/**
 * The PostgreSQL store (issue 10): the same port as DuckDB (`io/store.ts`), passing the same contract suite, opened
 * by every instance of the service when `DATABASE_URL` is set. Nothing is cached per instance but the recent paid
 * calls, which each instance brings up to date by number at its next lookup (`io/_postgres-paid-calls.ts`).
 *
 * Receipt and observation writes are group-committed: `indexReceipts` starts a flush at once when none runs, and
 * rows queued meanwhile go in the next one, so a burst costs a few multi-row inserts and a row is visible to other
 * instances a round trip after it was queued. `flush()` resolves once everything queued before it is committed.
 */
import postgres, { type Sql, type TransactionSql } from 'postgres';
import type { HttpMethod, Observation } from '../core/model.ts';
import { isPublicState } from '../core/public-state.ts';
import type { HostObservation } from '../core/reputation.ts';
import { type PostgresPaidCalls, postgresPaidCalls } from './_postgres-paid-calls.ts';
import {
  insertChunk,
  serialFlush,
  toHostCheck,
  toListing,
  toReceiptSummary,
  toStoredObservation,
} from './_store-rows.ts';
import { migrate } from './postgres-schema.ts';
import { hostOf, OBSERVATIONS_KEPT, pickListing, type ReceiptRow, type Store } from './store.ts';

const CHUNK = 500;

/** Opens a pool of `poolSize` connections (default 10) on `url` and applies pending migrations. */
export async function connectPostgres(url: string, options: { poolSize?: number } = {}): Promise<Sql> {
  const sql = postgres(url, { max: options.poolSize ?? 10, onnotice: () => {} });
  try {
    await migrate(sql);
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
  return sql;
}

/** Opens a pool on `url`, applies pending migrations, and returns the store, which ends the pool on close. */
export async function openPostgresStore(url: string, options: { poolSize?: number } = {}): Promise<Store> {
  return postgresStore(await connectPostgres(url, options), { endPool: true });
}

/** The PostgreSQL store, which can also say when a receipt's row is committed and load the recent paid calls ahead. */
export type PostgresStore = Store &
  Pick<PostgresPaidCalls, 'preloadPaidCalls'> & {
    /**
     * Resolves once the receipt `id`, queued by `indexReceipts`, is committed where every instance reads it; rejects
     * when the index could not take it (the ledger then does not acknowledge it: issue 10 item 1).
     */
    committed(id: string): Promise<void>;
  };

/** Receipt ids the index refused, kept for {@link PostgresStore.committed} (bounded: old ones are dropped). */
const REFUSED_KEPT = 10_000;

/** The store over a migrated pool; `endPool` says whether `close()` ends the pool (false when it is shared). */
export function postgresStore(sql: Sql, options: { endPool: boolean }): PostgresStore {
  const paidCalls = postgresPaidCalls(sql);
  const refused = new Map<string, unknown>();
  const refuse = (id: string, error: unknown) => {
    if (refused.size >= REFUSED_KEPT) refused.delete(refused.keys().next().value as string);
    refused.set(id, error);
  };
  let receiptQueue: ReceiptRow[] = [];
  let observationQueue: Array<[string, HttpMethod, Observation]> = [];
  let inFlight: Array<[string, HttpMethod, Observation]> = [];

  // One transaction per pass: one commit (one WAL flush) for every row queued meanwhile. A pass takes what is
  // queued when it starts, never loops until the queues are empty: under steady load they never are, and every
  // acknowledged answer waits for a pass to finish (`committed`).
  const drain = async (): Promise<void> => {
    const batch = { receipts: receiptQueue, observations: observationQueue };
    [receiptQueue, observationQueue, inFlight] = [[], [], batch.observations];
    try {
      await insertBatch(sql, batch.receipts, batch.observations);
    } catch {
      // Row by row, so one row the index cannot take (it stays in the journal and its file) keeps no other out.
      for (const row of batch.receipts) {
        await insertReceipts(sql, [row]).catch((error: unknown) => {
          refuse(row.id, error);
          console.error('[spotcheck] [store] receipt not indexed', error);
        });
      }
      await insertChunk(batch.observations, (rows) => insertObservations(sql, rows));
    }
    inFlight = [];
  };
  const pending = () => receiptQueue.length > 0 || observationQueue.length > 0;
  const { flush, busy } = serialFlush(drain, pending);
  // Rows queued while a pass ran go in the next one, started as soon as that pass ends.
  const start = (): void => {
    if (busy() || !pending()) return;
    flush().then(start, (error: unknown) => console.error('[spotcheck] [store] index flush failed', error));
  };

  /** Observations of an endpoint still queued or being written: not in the table yet. */
  const unflushed = (urlNorm: string, method: HttpMethod) =>
    [...inFlight, ...observationQueue].filter(([u, m]) => u === urlNorm && m === method).map(([, , o]) => o);
  /** The table's rows with the queued ones seen before and after the query, newest first, one per time. */
  const merged = (rows: Observation[], before: Observation[], after: Observation[]): Observation[] => {
    const byTime = new Map<string, Observation>();
    for (const item of [...rows, ...before, ...after]) byTime.set(item.observed_at, item);
    return [...byTime.values()]
      .sort((a, b) => b.observed_at.localeCompare(a.observed_at))
      .slice(0, OBSERVATIONS_KEPT);
  };

  const store: PostgresStore = {
    async committed(id) {
      await flush();
      const error = refused.get(id);
      if (refused.delete(id))
        throw new Error(`receipt ${id} is not committed in PostgreSQL`, { cause: error });
    },
    indexReceipts(rows) {
      receiptQueue.push(...rows);
      start();
    },
    addObservation(urlNorm, method, observation) {
      observationQueue.push([urlNorm, method, observation]);
      start();
    },
    async observations(urlNorm, method) {
      // Read the queues before and after the query: a batch committed while the query ran (on another pooled
      // connection) has left them and may be missing from the rows, but was seen before.
      const before = unflushed(urlNorm, method);
      const rows = await sql`SELECT * FROM observations WHERE url_norm = ${urlNorm} AND method = ${method}
        ORDER BY observed_at DESC LIMIT ${OBSERVATIONS_KEPT}`;
      return merged(rows.map(toStoredObservation), before, unflushed(urlNorm, method));
    },
    async endpoint(urlNorm, method) {
      // Both reads in one statement: a check waits for one round trip, and the server runs one query, not two.
      // Rows of `kind` 'l' are listings, the others observations (each kind with its own columns, the rest null).
      const before = unflushed(urlNorm, method);
      const rows = await sql`SELECT * FROM (SELECT 'o' AS kind, observed_at, http_status, price_usd,
          amount_atomic, network, asset, pay_to, NULL AS url, NULL AS method, NULL AS source FROM observations
          WHERE url_norm = ${urlNorm} AND method = ${method} ORDER BY observed_at DESC LIMIT ${OBSERVATIONS_KEPT}) o
        UNION ALL
        SELECT 'l', NULL, NULL, price_usd, NULL, network, asset, pay_to, url, method, source FROM listings
          WHERE url_norm = ${urlNorm}`;
      const listings = rows.filter((row) => row.kind === 'l').map(toListing);
      const observations = rows.filter((row) => row.kind === 'o').map(toStoredObservation);
      return {
        listing: pickListing(listings, method),
        observations: merged(observations, before, unflushed(urlNorm, method)),
      };
    },
    async receipt(id) {
      await flush();
      const [row] = await sql`SELECT body FROM receipts WHERE id = ${id}`;
      return row ? (JSON.parse(String(row.body)) as Record<string, unknown>) : null;
    },
    async latestReceiptByUrl(urlNorm, form) {
      await flush();
      const [row] = await sql`SELECT body FROM receipts WHERE url = ${form.url} AND method = ${form.method}
        AND url_norm = ${urlNorm} AND public_state ORDER BY issued_at DESC, id DESC LIMIT 1`;
      return row ? (JSON.parse(String(row.body)) as Record<string, unknown>) : null;
    },
    async listReceipts({ mode, page, pageSize }) {
      await flush();
      const where = mode ? sql`WHERE mode = ${mode}` : sql``;
      const [total] = await sql`SELECT count(*)::int AS n FROM receipts ${where}`;
      const rows = await sql`SELECT id, type, issued_at, url, method, verdict, reason, check_type, mode, tier
        FROM receipts ${where} ORDER BY issued_at DESC, id DESC LIMIT ${pageSize} OFFSET ${(page - 1) * pageSize}`;
      return { items: rows.map(toReceiptSummary), total: Number(total?.n ?? 0), page, pageSize };
    },
    async listing(urlNorm, method) {
      const rows = await sql`SELECT * FROM listings WHERE url_norm = ${urlNorm}`;
      return pickListing(rows.map(toListing), method);
    },
    async importListings(rows) {
      // Last row wins for one (url, method, source), as INSERT OR REPLACE does in DuckDB.
      const unique = new Map(rows.map((l) => [`${l.source}\u0000${l.method}\u0000${l.urlNorm}`, l]));
      const values = [...unique.values()].map((l) => ({
        url_norm: l.urlNorm,
        method: l.method,
        url: l.url,
        price_usd: finite(l.priceUsd),
        network: l.network,
        asset: l.asset,
        pay_to: l.payTo,
        source: l.source,
        host: hostOf(l.urlNorm),
      }));
      await sql.begin(async (tx) => {
        await tx`DELETE FROM listings WHERE source IN ${tx([...new Set(rows.map((row) => row.source))])}`;
        for (let i = 0; i < values.length; i += CHUNK)
          await tx`INSERT INTO listings ${tx(values.slice(i, i + CHUNK))}`;
      });
      return rows.length;
    },
    ...paidCalls,
    async observationsByHost(host, limit) {
      await flush();
      const rows = await sql`SELECT * FROM (SELECT method || ' ' || url_norm AS endpoint, *, row_number() OVER
          (PARTITION BY url_norm, method ORDER BY observed_at DESC) AS n FROM observations WHERE host = ${host}) o
        WHERE n <= ${OBSERVATIONS_KEPT} ORDER BY observed_at DESC, endpoint LIMIT ${Math.max(0, Math.floor(limit))}`;
      return rows.map(
        (row): HostObservation => ({ ...toStoredObservation(row), endpoint: String(row.endpoint) }),
      );
    },
    async checksByHost(host, limit) {
      await flush();
      const rows = await sql`SELECT verdict, reason, issued_at, body FROM receipts
        WHERE host = ${host} AND type = 'check' AND verdict IS NOT NULL
        ORDER BY issued_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`;
      return rows.map(toHostCheck);
    },
    async publicChecksByHost(host, limit) {
      await flush();
      // `PUBLIC_FORMS_OF_HOST` (io/_store-rows.ts): the listed forms of the host's endpoints, else their newest pay's.
      const rows = await sql`WITH l AS (SELECT url_norm, url, method FROM listings WHERE host = ${host}),
          p AS (SELECT DISTINCT ON (url_norm) url_norm, url, method FROM receipts
            WHERE host = ${host} AND public_state AND verdict = 'pay' AND url_norm NOT IN (SELECT url_norm FROM l)
            ORDER BY url_norm, issued_at DESC, id DESC),
          f AS (SELECT url_norm, url, method FROM l UNION ALL SELECT url_norm, url, method FROM p)
        SELECT r.body FROM receipts r
        WHERE r.host = ${host} AND r.public_state
          AND EXISTS (SELECT 1 FROM f WHERE f.url_norm = r.url_norm AND f.url = r.url AND f.method = r.method)
        ORDER BY r.issued_at DESC, r.id DESC LIMIT ${Math.max(0, Math.floor(limit))}`;
      return rows.map((row) => JSON.parse(String(row.body)) as Record<string, unknown>);
    },
    flush,
    async close() {
      await flush();
      if (options.endPool) await sql.end({ timeout: 5 });
    },
  };
  return store;
}

/** A price no double holds (a hostile 1e400 parses to Infinity) is stored as unknown, as in DuckDB. */
function finite(value: number | null): number | null {
  return value === null || !Number.isFinite(value) ? null : value;
}

/**
 * Inserts a batch atomically. A batch within one chunk is one statement (receipts and observations joined by a
 * CTE): one round trip and one commit, which is what a receipt's acknowledgement waits for. A larger one (recovery,
 * a crawl run) is a transaction of chunked statements.
 */
async function insertBatch(
  sql: Sql,
  receipts: ReceiptRow[],
  observations: Array<[string, HttpMethod, Observation]>,
): Promise<void> {
  if (receipts.length > CHUNK || observations.length > CHUNK) {
    await sql.begin(async (tx) => {
      for (let i = 0; i < receipts.length; i += CHUNK) await insertReceipts(tx, receipts.slice(i, i + CHUNK));
      for (let i = 0; i < observations.length; i += CHUNK)
        await insertObservations(tx, observations.slice(i, i + CHUNK));
    });
  } else if (receipts.length === 0) {
    await insertObservations(sql, observations);
  } else if (observations.length === 0) {
    await insertReceipts(sql, receipts);
  } else {
    await sql`WITH indexed AS (
        INSERT INTO receipts ${sql(receiptValues(receipts))} ON CONFLICT (id) DO NOTHING)
      INSERT INTO observations ${sql(observationValues(observations))} ON CONFLICT DO NOTHING`;
  }
}

/**
 * Rows go in as one array per column through `unnest`: a fixed statement of 14 parameters, where a multi-row
 * `VALUES` had 14 per row for PostgreSQL to parse and plan on every pass.
 */
async function insertReceipts(sql: Sql | TransactionSql, rows: ReceiptRow[]): Promise<void> {
  if (rows.length === 0) return;
  const c = columnsOf(receiptValues(rows));
  await sql`INSERT INTO receipts (id, type, issued_at, url, url_norm, host, method, verdict, reason, check_type, mode,
    tier, body, public_state)
    SELECT * FROM unnest(${sql.array(c.id, TEXT)}::text[], ${sql.array(c.type, TEXT)}::text[],
      ${sql.array(c.issued_at, TEXT)}::text[], ${sql.array(c.url, TEXT)}::text[], ${sql.array(c.url_norm, TEXT)}::text[],
      ${sql.array(c.host, TEXT)}::text[], ${sql.array(c.method, TEXT)}::text[], ${sql.array(c.verdict, TEXT)}::text[],
      ${sql.array(c.reason, TEXT)}::text[], ${sql.array(c.check_type, TEXT)}::text[], ${sql.array(c.mode, TEXT)}::text[],
      ${sql.array(c.tier, TEXT)}::text[], ${sql.array(c.body, TEXT)}::text[], ${sql.array(c.public_state, BOOL)}::boolean[])
    ON CONFLICT (id) DO NOTHING`;
}

/** OIDs of the array element types sent (PostgreSQL's `text` and `boolean`). */
const TEXT = 25;
const BOOL = 16;

/** Rows of objects as one array per member (every row has the members of the first). */
function columnsOf<T extends Record<string, unknown>>(rows: T[]): { [K in keyof T]: Array<T[K]> } {
  const columns = {} as { [K in keyof T]: Array<T[K]> };
  for (const key of Object.keys(rows[0] ?? {}) as Array<keyof T>) columns[key] = rows.map((row) => row[key]);
  return columns;
}

async function insertObservations(
  sql: Sql | TransactionSql,
  rows: Array<[string, HttpMethod, Observation]>,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`INSERT INTO observations ${sql(observationValues(rows))} ON CONFLICT DO NOTHING`;
}

function receiptValues(rows: ReceiptRow[]) {
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    issued_at: r.issuedAt,
    url: r.url,
    url_norm: r.urlNorm,
    host: hostOf(r.urlNorm),
    method: r.method,
    verdict: r.verdict,
    reason: r.reason,
    check_type: r.checkType,
    mode: r.mode,
    tier: r.tier,
    body: JSON.stringify(r.body),
    public_state: isPublicState(r.body),
  }));
}

function observationValues(rows: Array<[string, HttpMethod, Observation]>) {
  return rows.map(([urlNorm, method, o]) => ({
    url_norm: urlNorm,
    method,
    host: hostOf(urlNorm),
    observed_at: o.observed_at,
    http_status: o.http_status,
    price_usd: finite(o.price_usd),
    amount_atomic: o.amount_atomic,
    network: o.network,
    asset: o.asset,
    pay_to: o.pay_to,
  }));
}
