/**
 * The PostgreSQL store's writer: receipt and observation rows are group-committed. A row queued starts a pass at once
 * when none runs, and rows queued meanwhile go in the next one, so a burst costs a few multi-row inserts and a row is
 * visible to other instances a round trip after it was queued. A receipt the index refuses is remembered for
 * {@link PostgresWriter.committed}, so the ledger does not acknowledge it.
 */
import { LRUCache } from 'lru-cache';
import type { Sql, TransactionSql } from 'postgres';
import type { HttpMethod, Observation } from '../../core/model.ts';
import { isPublicState } from '../../core/public-state.ts';
import { insertChunk, serialFlush } from './_rows.ts';
import { hostOf, type ReceiptRow } from './port.ts';

const CHUNK = 500;

/** Receipt ids the index refused, kept for {@link PostgresWriter.committed} (bounded: old ones are dropped). */
const REFUSED_KEPT = 10_000;

type ObservationRow = [urlNorm: string, method: HttpMethod, observation: Observation];

/** The queue of rows on their way to the tables. */
export type PostgresWriter = {
  /** Queues receipt rows. */
  receipts(rows: readonly ReceiptRow[]): void;
  /** Queues one observation. */
  observation(row: ObservationRow): void;
  /** Observations of an endpoint still queued or being written: not in the table yet. */
  unflushed(urlNorm: string, method: HttpMethod): Observation[];
  /** Resolves once everything queued before the call is committed. */
  flush(): Promise<void>;
  /** Resolves once the receipt `id` is committed; rejects when the index could not take it. */
  committed(id: string): Promise<void>;
};

/** Creates the writer over a migrated pool. */
export function createPostgresWriter(sql: Sql): PostgresWriter {
  const refused = new LRUCache<string, { error: unknown }>({ max: REFUSED_KEPT });
  const refuse = (id: string, error: unknown) => {
    refused.set(id, { error });
  };
  let receiptQueue: ReceiptRow[] = [];
  let observationQueue: ObservationRow[] = [];
  let inFlight: ObservationRow[] = [];

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
  return {
    receipts(rows) {
      receiptQueue.push(...rows);
      start();
    },
    observation(row) {
      observationQueue.push(row);
      start();
    },
    unflushed: (urlNorm, method) =>
      [...inFlight, ...observationQueue]
        .filter(([u, m]) => u === urlNorm && m === method)
        .map(([, , o]) => o),
    flush,
    async committed(id) {
      await flush();
      const error = refused.get(id)?.error;
      if (refused.delete(id))
        throw new Error(`receipt ${id} is not committed in PostgreSQL`, { cause: error });
    },
  };
}

/** A price no double holds (a hostile 1e400 parses to Infinity) is stored as unknown, as in DuckDB. */
export function finite(value: number | null): number | null {
  return value === null || !Number.isFinite(value) ? null : value;
}

/**
 * Inserts a batch atomically. A batch within one chunk is one statement (receipts and observations joined by a
 * CTE): one round trip and one commit, which is what a receipt's acknowledgement waits for. A larger one (recovery,
 * a crawl run) is a transaction of chunked statements.
 */
async function insertBatch(sql: Sql, receipts: ReceiptRow[], observations: ObservationRow[]): Promise<void> {
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

async function insertObservations(sql: Sql | TransactionSql, rows: ObservationRow[]): Promise<void> {
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

function observationValues(rows: ObservationRow[]) {
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
