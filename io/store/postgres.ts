/**
 * The PostgreSQL store: the same port as DuckDB (`io/store/port.ts`), passing the same contract suite, opened
 * by every instance of the service when `DATABASE_URL` is set. Nothing is cached per instance but the recent paid
 * calls, which each instance brings up to date by number at its next lookup (`io/store/_postgres-paid-calls.ts`).
 *
 * Receipt and observation writes are group-committed by the writer (`_postgres-writer.ts`): `indexReceipts` starts a
 * flush at once when none runs, and rows queued meanwhile go in the next one, so a burst costs a few multi-row
 * inserts and a row is visible to other instances a round trip after it was queued. `flush()` resolves once
 * everything queued before it is committed. The reads are `_postgres-reads.ts`.
 */
import postgres, { type Sql } from 'postgres';
import { migrate } from '../postgres/schema.ts';
import { type PostgresPaidCalls, postgresPaidCalls } from './_postgres-paid-calls.ts';
import { postgresReads } from './_postgres-reads.ts';
import { createPostgresWriter, finite } from './_postgres-writer.ts';
import { hostOf, type Store } from './port.ts';

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
     * when the index could not take it (the ledger then does not acknowledge it).
     */
    committed(id: string): Promise<void>;
  };

/** The store over a migrated pool; `endPool` says whether `close()` ends the pool (false when it is shared). */
export function postgresStore(sql: Sql, options: { endPool: boolean }): PostgresStore {
  const writer = createPostgresWriter(sql);
  return {
    committed: writer.committed,
    indexReceipts: (rows) => writer.receipts(rows),
    addObservation: (urlNorm, method, observation) => writer.observation([urlNorm, method, observation]),
    async importRunRows(receipts, observations) {
      // Other instances read PostgreSQL straight away: the rows go through the group-committing writer.
      writer.receipts(receipts);
      for (const row of observations) writer.observation(row);
      await writer.flush();
    },
    ...postgresReads(sql, writer),
    importListings: (rows) => importListings(sql, rows),
    ...postgresPaidCalls(sql),
    flush: writer.flush,
    async close() {
      await writer.flush();
      if (options.endPool) await sql.end({ timeout: 5 });
    },
  };
}

/** Replaces the listings of every source among `rows` with them, in one transaction. */
async function importListings(sql: Sql, rows: Parameters<Store['importListings']>[0]): Promise<number> {
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
}
