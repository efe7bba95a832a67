/**
 * The DuckDB store's reads of receipts, and of observations by host: each flushes the queued index writes first,
 * so it sees every row queued before it, then queries the table. (The observations of one endpoint are answered by
 * the store's own cache instead, with no flush.) A row whose body is empty has it in its receipt file: `readBody`
 * gives it back.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { LIMITS } from '../../core/limits.ts';
import type { HttpMethod } from '../../core/model.ts';
import type { HostCheck, HostObservation } from '../../core/reputation.ts';
import { select } from '../duckdb/query.ts';
import { hostCheckOf, PUBLIC_FORMS_OF_HOST, toReceiptSummary, toStoredObservation } from './_rows.ts';
import type { Page, ReceiptSummary, Store } from './port.ts';

/** The reads of the store port that go to the tables after a flush. */
export type IndexReads = Pick<
  Store,
  | 'receipt'
  | 'latestReceiptByUrl'
  | 'listReceipts'
  | 'observationsByHost'
  | 'checksByHost'
  | 'publicChecksByHost'
>;

type ReadBody = (id: string) => Promise<Record<string, unknown> | null>;

/**
 * The reads on `db`, each after `flush` (the store's, which writes what it has queued); `readBody` answers the
 * bodies of rows indexed without one (null: every row has its body).
 */
export function createIndexReads(
  db: DuckDBConnection,
  flush: () => Promise<void>,
  readBody: ReadBody | null,
): IndexReads {
  const reader: Reader = { db, flush, readBody };
  return {
    receipt: (id) => receipt(reader, id),
    latestReceiptByUrl: (urlNorm, form) => latestReceiptByUrl(reader, urlNorm, form),
    listReceipts: (query) => listReceipts(reader, query),
    observationsByHost: (host, limit) => observationsByHost(reader, host, limit),
    checksByHost: (host, limit) => checksByHost(reader, host, limit),
    publicChecksByHost: (host, limit) => publicChecksByHost(reader, host, limit),
  };
}

/** What every read goes through. */
type Reader = {
  readonly db: DuckDBConnection;
  readonly flush: () => Promise<void>;
  readonly readBody: ReadBody | null;
};

/** The body of a row selected with `id` and `body`; null when it is in a file that is gone. */
async function bodyOf(reader: Reader, row: Record<string, unknown>): Promise<Record<string, unknown> | null> {
  const text = String(row.body);
  if (text !== '') return JSON.parse(text) as Record<string, unknown>;
  return reader.readBody ? await reader.readBody(String(row.id)) : null;
}

async function receipt(reader: Reader, id: string): Promise<Record<string, unknown> | null> {
  await reader.flush();
  const rows = await select(reader.db, 'SELECT id, body FROM receipts WHERE id = ?', [id]);
  return rows[0] ? await bodyOf(reader, rows[0]) : null;
}

async function latestReceiptByUrl(
  reader: Reader,
  urlNorm: string,
  form: { url: string; method: HttpMethod },
): Promise<Record<string, unknown> | null> {
  await reader.flush();
  const rows = await select(
    reader.db,
    `SELECT id, body FROM receipts WHERE url_norm = ? AND url = ? AND method = ? AND public_state
     ORDER BY issued_at DESC, id DESC LIMIT 1`,
    [urlNorm, form.url, form.method],
  );
  return rows[0] ? await bodyOf(reader, rows[0]) : null;
}

async function listReceipts(
  { db, flush }: Reader,
  { mode, page, pageSize }: Parameters<Store['listReceipts']>[0],
): Promise<Page<ReceiptSummary>> {
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
}

async function observationsByHost(
  { db, flush }: Reader,
  host: string,
  limit: number,
): Promise<HostObservation[]> {
  await flush();
  const rows = await select(
    db,
    `SELECT method || ' ' || url_norm AS endpoint, observed_at, http_status, price_usd, amount_atomic, network, asset,
       pay_to FROM observations WHERE host = ?
     QUALIFY row_number() OVER (PARTITION BY url_norm, method ORDER BY observed_at DESC) <= ${LIMITS.historyKept}
     ORDER BY observed_at DESC, endpoint LIMIT ${Math.max(0, Math.floor(limit))}`,
    [host],
  );
  return rows.map(
    (row): HostObservation => ({ ...toStoredObservation(row), endpoint: String(row.endpoint) }),
  );
}

async function checksByHost(reader: Reader, host: string, limit: number): Promise<HostCheck[]> {
  await reader.flush();
  const rows = await select(
    reader.db,
    `SELECT id, verdict, reason, issued_at, body FROM receipts
     WHERE host = ? AND type = 'check' AND verdict IS NOT NULL
     ORDER BY issued_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
    [host],
  );
  return Promise.all(rows.map(async (row) => hostCheckOf(row, await bodyOf(reader, row))));
}

async function publicChecksByHost(
  reader: Reader,
  host: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  await reader.flush();
  const rows = await select(
    reader.db,
    `${PUBLIC_FORMS_OF_HOST}
     SELECT r.id, r.body FROM receipts r
     WHERE r.host = ? AND r.public_state
       AND EXISTS (SELECT 1 FROM f WHERE f.url_norm = r.url_norm AND f.url = r.url AND f.method = r.method)
     ORDER BY r.issued_at DESC, r.id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
    [host, host, host],
  );
  return (await Promise.all(rows.map((row) => bodyOf(reader, row)))).filter((body) => body !== null);
}
