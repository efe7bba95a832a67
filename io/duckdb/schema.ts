/**
 * The DuckDB store's tables, and the migrations that bring a database file made by an earlier version up to them.
 * Every statement is idempotent, so opening a file already up to date changes nothing.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { isPublicState } from '../../core/public-state.ts';
import { hostOf } from '../store/port.ts';
import { CHUNK, select } from './query.ts';

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

/**
 * Creates the tables a new file lacks, then migrates an older one. Runs before anything else touches `db`: the
 * staging tables of `io/store/_duckdb-index-writes.ts` copy the columns these add.
 */
export async function applySchema(db: DuckDBConnection): Promise<void> {
  await db.run(SCHEMA);
  await addPublicState(db);
  await addHostColumns(db);
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
 * The `host` column of receipts, observations and listings (`hostOf`, the port's one rule for a URL's host), indexed,
 * so the reputation and badge queries of one host read that host's rows only (a badge reads the host's listed forms,
 * `core/public-state.ts`). Databases made before it get the column, filled once from their normalized URLs.
 */
async function addHostColumns(db: DuckDBConnection): Promise<void> {
  for (const table of ['receipts', 'observations', 'listings']) {
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
