/**
 * How the DuckDB store writes its queued receipt and observation rows: through an appender into a staging table of
 * the connection's own (`temp`, no keys, no indexes), then into the indexed table in one `INSERT OR IGNORE ... SELECT`.
 *
 * A multi-row `INSERT ... VALUES` with bound parameters cost about 105 µs of CPU per receipt row (150 µs with its
 * signed text), nearly all of it DuckDB parsing, binding and planning 2,800 parameters per 200 rows; the appender
 * path costs about 25 µs (50 µs with the text), measured on 20,000 rows. When the staged statement fails (a row the
 * table refuses), the rows go in one by one instead, so one bad row does not keep the others out; it stays in the
 * journal and its file.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { isPublicState } from '../../core/public-state.ts';
import { hostOf, type ObservationRow, type ReceiptRow } from './port.ts';

export const RECEIPT_COLUMNS =
  'id, type, issued_at, url, url_norm, method, verdict, reason, check_type, mode, tier, body, public_state, host';
export const OBSERVATION_COLUMNS =
  'url_norm, method, observed_at, http_status, price_usd, amount_atomic, network, asset, pay_to, host';

/** Rows appended and handed over between two yields to the event loop: a flush of thousands never holds it long
 *  (250 receipt rows with their text are about 10 ms of appends). */
const SLICE = 250;

/** The two row kinds the store queues, each with its table, staging table and the appends of one row. */
const RECEIPTS: Kind<ReceiptRow> = {
  table: 'receipts',
  stage: 'receipts_stage',
  columns: RECEIPT_COLUMNS,
  append(appender: DuckDBAppender, r: ReceiptRow) {
    appender.appendVarchar(r.id);
    appender.appendVarchar(r.type);
    appender.appendVarchar(r.issuedAt);
    text(appender, r.url);
    text(appender, r.urlNorm);
    text(appender, r.method);
    text(appender, r.verdict);
    text(appender, r.reason);
    text(appender, r.checkType);
    text(appender, r.mode);
    appender.appendVarchar(r.tier);
    appender.appendVarchar(r.bodyJson ?? JSON.stringify(r.body));
    appender.appendBoolean(isPublicState(r.body));
    text(appender, hostOf(r.urlNorm));
  },
};

const OBSERVATIONS: Kind<ObservationRow> = {
  table: 'observations',
  stage: 'observations_stage',
  columns: OBSERVATION_COLUMNS,
  append(appender: DuckDBAppender, [urlNorm, method, o]: ObservationRow) {
    appender.appendVarchar(urlNorm);
    appender.appendVarchar(method);
    appender.appendVarchar(o.observed_at);
    if (o.http_status === null) appender.appendNull();
    else appender.appendInteger(o.http_status);
    // A finite double of any size fits (1e71 from a hostile challenge included).
    const price = storedDouble(o.price_usd);
    if (price === null) appender.appendNull();
    else appender.appendDouble(price);
    text(appender, o.amount_atomic);
    text(appender, o.network);
    text(appender, o.asset);
    text(appender, o.pay_to);
    text(appender, hostOf(urlNorm));
  },
};

type Kind<T> = {
  table: string;
  stage: string;
  columns: string;
  append(appender: DuckDBAppender, row: T): void;
};

/** The index writes of one connection (the store's own; staging tables are visible to it alone). */
export type IndexWrites = {
  receipts(rows: ReceiptRow[]): Promise<void>;
  observations(rows: ObservationRow[]): Promise<void>;
};

/** Creates the staging tables on `db` (after the schema exists) and returns its writers. Calls must not overlap. */
export async function createIndexWrites(db: DuckDBConnection): Promise<IndexWrites> {
  for (const kind of [RECEIPTS, OBSERVATIONS]) await emptyStage(db, kind);
  return {
    receipts: (rows) => write(db, RECEIPTS, rows),
    observations: (rows) => write(db, OBSERVATIONS, rows),
  };
}

async function write<T>(db: DuckDBConnection, kind: Kind<T>, rows: T[]): Promise<void> {
  if (rows.length === 0) return;
  try {
    await stageAndInsert(db, kind, rows);
  } catch {
    // One row the table refuses fails the statement: the rows go in one by one, and only that row stays out.
    for (const row of rows) {
      await emptyStage(db, kind);
      await stageAndInsert(db, kind, [row]).catch((error: unknown) =>
        console.error(`[spotcheck] [store] row not indexed in ${kind.table}`, error),
      );
    }
  }
  await emptyStage(db, kind);
}

/** Appends `rows` to the staging table a slice at a time, then moves them into the indexed table. */
async function stageAndInsert<T>(db: DuckDBConnection, kind: Kind<T>, rows: T[]): Promise<void> {
  const appender = await db.createAppender(kind.stage, 'main', 'temp');
  try {
    for (let i = 0; i < rows.length; i++) {
      kind.append(appender, rows[i] as T);
      appender.endRow();
      if ((i + 1) % SLICE === 0) {
        // Each slice is handed to DuckDB now: what the appender holds is copied out synchronously, and a close
        // holding thousands of rows kept checks waiting for 10-20 ms (crawl-ingest profile).
        appender.flushSync();
        await yieldToEventLoop();
      }
    }
  } finally {
    appender.closeSync();
  }
  await db.run(`INSERT OR IGNORE INTO ${kind.table} (${kind.columns}) SELECT * FROM temp.${kind.stage}`);
}

/**
 * Makes the staging table anew and empty. Made anew, not emptied with DELETE: DuckDB keeps the memory of rows deleted
 * from a temporary table, so the service grew by every receipt's text (60,000 rows of 3 KB: 391 MiB of RSS against 228).
 */
async function emptyStage(db: DuckDBConnection, kind: Omit<Kind<never>, 'append'>): Promise<void> {
  await db.run(
    `CREATE OR REPLACE TEMP TABLE ${kind.stage} AS SELECT ${kind.columns} FROM ${kind.table} LIMIT 0`,
  );
}

/** A price as the tables keep it: not finite is unknown. */
export function storedDouble(value: number | null): number | null {
  return value === null || !Number.isFinite(value) ? null : value;
}

function text(appender: DuckDBAppender, value: string | null): void {
  if (value === null) appender.appendNull();
  else appender.appendVarchar(value);
}
