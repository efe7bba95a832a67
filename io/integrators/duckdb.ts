/**
 * The integrator store (`port.ts`) in its own DuckDB file (`integrators.duckdb`), so an operator CLI can open it
 * when no server runs; while one runs, the CLI hands its operation over through the inbox (DuckDB is
 * single-writer). Operations run one at a time: each is one transaction. The invoice half is `_duckdb-invoices.ts`.
 */
import { randomBytes } from 'node:crypto';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { type DuckDbLimits, openDuckDbInstance } from '../duckdb/instance.ts';
import { select } from '../duckdb/query.ts';
import { duckdbInvoices, INVOICE_SCHEMA, tokenizeInvoices } from './_duckdb-invoices.ts';
import { integratorOf, keyOf } from './_rows.ts';
import type { IntegratorStore, UsageDelta, UsageRow } from './port.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS integrators (
  id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, credit_limit_atomic VARCHAR NOT NULL, created_at VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS service_keys (
  id VARCHAR PRIMARY KEY, integrator VARCHAR NOT NULL, secret_hash VARCHAR NOT NULL, label VARCHAR NOT NULL,
  state VARCHAR NOT NULL, created_at VARCHAR NOT NULL, changed_at VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS hosted_usage (
  integrator VARCHAR NOT NULL, month VARCHAR NOT NULL, calls BIGINT NOT NULL, PRIMARY KEY (integrator, month));
CREATE TABLE IF NOT EXISTS hosted_end_users (
  integrator VARCHAR NOT NULL, month VARCHAR NOT NULL, end_user VARCHAR NOT NULL, calls BIGINT NOT NULL,
  PRIMARY KEY (integrator, month, end_user));
CREATE TABLE IF NOT EXISTS hosted_cursor (one INTEGER PRIMARY KEY, cursor VARCHAR NOT NULL);
${INVOICE_SCHEMA}`;

/**
 * Opens (or creates) the store; throws when another process holds the file (the CLI then uses the inbox). `random`
 * draws the pay-link tokens of invoices stored before there were any.
 */
export async function openIntegratorStore(
  path: string,
  random: (n: number) => Uint8Array = (n) => new Uint8Array(randomBytes(n)),
  limits?: DuckDbLimits,
): Promise<IntegratorStore> {
  const instance = await openDuckDbInstance(path, limits);
  const db = await instance.connect();
  await db.run(SCHEMA);
  await tokenizeInvoices(db, random);
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const rows = (sql: string, values: DuckDBValue[] = []) => serial(() => select(db, sql, values));

  return {
    createIntegrator: (row) =>
      serial(() =>
        db.run('INSERT INTO integrators VALUES (?, ?, ?, ?)', [
          row.id,
          row.name,
          row.creditLimitAtomic.toString(),
          row.createdAt,
        ]),
      ).then(() => undefined),
    addKey: (row) =>
      serial(() =>
        db.run('INSERT INTO service_keys VALUES (?, ?, ?, ?, ?, ?, ?)', [
          row.id,
          row.integrator,
          row.secretHash,
          row.label,
          row.state,
          row.createdAt,
          row.changedAt,
        ]),
      ).then(() => undefined),
    setKeyState: (keyId, state, at) =>
      serial(() =>
        db.run('UPDATE service_keys SET state = ?, changed_at = ? WHERE id = ?', [state, at, keyId]),
      ).then(() => undefined),
    integrators: async () => (await rows('SELECT * FROM integrators ORDER BY id')).map(integratorOf),
    keys: async () =>
      (await rows('SELECT * FROM service_keys ORDER BY integrator, created_at, id')).map(keyOf),
    usageCursor: async () => {
      const [row] = await rows('SELECT cursor FROM hosted_cursor WHERE one = 1');
      return row ? String(row.cursor) : null;
    },
    foldUsage: (delta, from, to) => serial(() => fold(db, delta, from, to)),
    usage: (filter) => usageRows(rows, filter),
    endUserHashes: async (integrator, month) =>
      (
        await rows('SELECT end_user FROM hosted_end_users WHERE integrator = ? AND month = ?', [
          integrator,
          month,
        ])
      ).map((r) => String(r.end_user)),
    ...duckdbInvoices(db, serial),
    close: () =>
      serial(async () => {
        db.closeSync();
        instance.closeSync();
      }),
  };
}

/** Calls and end users per integrator and month, as the filter narrows them. */
async function usageRows(
  rows: (sql: string, values?: DuckDBValue[]) => Promise<Record<string, unknown>[]>,
  filter: Parameters<IntegratorStore['usage']>[0],
): Promise<UsageRow[]> {
  const where: string[] = [];
  const values: DuckDBValue[] = [];
  if (filter.integrator !== undefined) {
    where.push('u.integrator = ?');
    values.push(filter.integrator);
  }
  if (filter.month !== undefined) {
    where.push('u.month = ?');
    values.push(filter.month);
  }
  const sql = `SELECT u.integrator, u.month, u.calls,
      (SELECT count(*) FROM hosted_end_users e WHERE e.integrator = u.integrator AND e.month = u.month) AS end_users
    FROM hosted_usage u ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY u.month, u.integrator`;
  return (await rows(sql, values)).map((r) => ({
    integrator: String(r.integrator),
    month: String(r.month),
    calls: Number(r.calls),
    endUsers: Number(r.end_users),
  }));
}

async function fold(
  db: DuckDBConnection,
  delta: UsageDelta,
  from: string | null,
  to: string,
): Promise<boolean> {
  await db.run('BEGIN TRANSACTION');
  try {
    const [current] = await select(db, 'SELECT cursor FROM hosted_cursor WHERE one = 1', []);
    if ((current ? String(current.cursor) : null) !== from) {
      await db.run('ROLLBACK');
      return false;
    }
    const usage = [...delta.calls].map(([slot, calls]) => [...slot.split('\u0000').slice(0, 2), calls]);
    await upsert(db, 'hosted_usage (integrator, month, calls)', usage, 'integrator, month');
    const users = [...delta.endUsers].map(([slot, calls]) => [...slot.split('\u0000').slice(0, 3), calls]);
    await upsert(
      db,
      'hosted_end_users (integrator, month, end_user, calls)',
      users,
      'integrator, month, end_user',
    );
    await db.run(
      'INSERT INTO hosted_cursor VALUES (1, ?) ON CONFLICT (one) DO UPDATE SET cursor = excluded.cursor',
      [to],
    );
    await db.run('COMMIT');
    return true;
  } catch (error) {
    await db.run('ROLLBACK');
    throw error;
  }
}

const CHUNK = 500;

/** Adds `calls` (the last value of each row) to existing rows, in multi-row statements. */
async function upsert(db: DuckDBConnection, table: string, rows: DuckDBValue[][], conflict: string) {
  const name = table.slice(0, table.indexOf(' '));
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const tuple = `(${Array(chunk[0]?.length ?? 0)
      .fill('?')
      .join(',')})`;
    await db.run(
      `INSERT INTO ${table} VALUES ${chunk.map(() => tuple).join(',')}
       ON CONFLICT (${conflict}) DO UPDATE SET calls = ${name}.calls + excluded.calls`,
      chunk.flat(),
    );
  }
}
