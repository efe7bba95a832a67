/**
 * The DuckDB store's reads of receipts, and of observations and checks by host. Each sees every row queued before
 * it:
 * - a receipt by id, by URL and the receipt list query the committed table on a connection of their own and add the
 *   writer's rows not in it yet (`IndexWriter.pendingReceipts`), with no flush: they never wait for a pass of the
 *   live queue nor for a crawl run's chunk holding the writer's turn (DuckDB lets a reader on another connection
 *   read the last committed state while a write runs; on the writing connection it would wait for the write);
 * - the reads by host flush the queued index writes first, then query the table.
 * (The observations of one endpoint are answered by the store's own cache instead, with no flush.) A row whose body
 * is empty has it in its receipt file: `readBody` gives it back.
 */
import { type DuckDBConnection, listValue } from '@duckdb/node-api';
import { LIMITS } from '../../core/limits.ts';
import type { HttpMethod } from '../../core/model.ts';
import { isPublicState } from '../../core/public-state.ts';
import type { HostCheck, HostObservation } from '../../core/reputation.ts';
import { select } from '../duckdb/query.ts';
import { hostCheckOf, PUBLIC_FORMS_OF_HOST, toReceiptSummary, toStoredObservation } from './_rows.ts';
import type { Page, ReceiptRow, ReceiptSummary, Store } from './port.ts';

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
 * The reads: by host on `db` after `writer.flush` (which writes what is queued); of receipts on `readDb`, a
 * connection that writes nothing, with `writer.pendingReceipts`. `readBody` answers the bodies of rows indexed
 * without one (null: every row has its body).
 */
export function createIndexReads(
  db: DuckDBConnection,
  readDb: DuckDBConnection,
  writer: { flush(): Promise<void>; pendingReceipts(): readonly ReceiptRow[] },
  readBody: ReadBody | null,
): IndexReads {
  const reader: Reader = { db, flush: () => writer.flush(), readBody };
  const receiptReader: ReceiptReader = { db: readDb, pending: () => writer.pendingReceipts(), readBody };
  return {
    receipt: (id) => receipt(receiptReader, id),
    latestReceiptByUrl: (urlNorm, form) => latestReceiptByUrl(receiptReader, urlNorm, form),
    listReceipts: (query) => listReceipts(receiptReader, query),
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

/** What the receipt reads go through: a connection that never writes, and the rows the table lacks yet. */
type ReceiptReader = {
  readonly db: DuckDBConnection;
  readonly pending: () => readonly ReceiptRow[];
  readonly readBody: ReadBody | null;
};

/** The body of a row selected with `id` and `body`; null when it is in a file that is gone. */
async function bodyOf(
  reader: Pick<Reader, 'readBody'>,
  row: Record<string, unknown>,
): Promise<Record<string, unknown> | null> {
  const text = String(row.body);
  if (text !== '') return JSON.parse(text) as Record<string, unknown>;
  return reader.readBody ? await reader.readBody(String(row.id)) : null;
}

/** A pending row as the table will hold it: its body as the text the writer appends (`_duckdb-index-writes.ts`). */
function asStored(row: ReceiptRow): Record<string, unknown> {
  return {
    id: row.id,
    type: row.type,
    issued_at: row.issuedAt,
    url: row.url,
    method: row.method,
    verdict: row.verdict,
    reason: row.reason,
    check_type: row.checkType,
    mode: row.mode,
    tier: row.tier,
    body: row.bodyJson ?? JSON.stringify(row.body),
  };
}

/** Newest first, as the reads order the table: by `issued_at`, then `id`, both descending. */
const newestFirst = (a: ReceiptRow, b: ReceiptRow): number =>
  a.issuedAt === b.issuedAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.issuedAt < b.issuedAt ? 1 : -1;

/**
 * The receipt rows pending now, each id once (the first queued, as the table keeps the first copy of an id). Taken
 * before a query: a row not pending now is in the table when the query runs, or was queued after the call.
 */
function pendingNow(reader: ReceiptReader): ReceiptRow[] {
  const seen = new Set<string>();
  return reader.pending().filter((row) => !seen.has(row.id) && seen.add(row.id));
}

/** The body of receipt `id` as the table keeps it, else as `pending` (null: none) will go in. */
async function keptBody(
  reader: ReceiptReader,
  id: string,
  pending: ReceiptRow | null,
): Promise<Record<string, unknown> | null> {
  const rows = await select(reader.db, 'SELECT id, body FROM receipts WHERE id = ?', [id]);
  if (rows[0]) return bodyOf(reader, rows[0]);
  return pending ? bodyOf(reader, asStored(pending)) : null;
}

async function receipt(reader: ReceiptReader, id: string): Promise<Record<string, unknown> | null> {
  return keptBody(reader, id, pendingNow(reader).find((row) => row.id === id) ?? null);
}

async function latestReceiptByUrl(
  reader: ReceiptReader,
  urlNorm: string,
  form: { url: string; method: HttpMethod },
): Promise<Record<string, unknown> | null> {
  const pending = pendingNow(reader)
    .filter(
      (row) =>
        row.urlNorm === urlNorm &&
        row.url === form.url &&
        row.method === form.method &&
        isPublicState(row.body),
    )
    .sort(newestFirst)[0];
  const rows = await select(
    reader.db,
    `SELECT id, issued_at, body FROM receipts WHERE url_norm = ? AND url = ? AND method = ? AND public_state
     ORDER BY issued_at DESC, id DESC LIMIT 1`,
    [urlNorm, form.url, form.method],
  );
  const stored = rows[0];
  const newer =
    pending &&
    (!stored ||
      pending.issuedAt > String(stored.issued_at) ||
      (pending.issuedAt === String(stored.issued_at) && pending.id >= String(stored.id)));
  // A pending row the table already holds (indexed twice) answers with the copy the table keeps.
  if (newer) return keptBody(reader, pending.id, pending);
  return stored ? await bodyOf(reader, stored) : null;
}

/**
 * A page of the table's receipts and the pending ones together. The table's side leaves out the pending ids (a pass
 * may commit some of them while the query runs), so none is counted twice; a receipt indexed twice is listed with
 * its pending copy's columns, the same receipt's. See {@link mergePage} for the paging.
 */
async function listReceipts(
  reader: ReceiptReader,
  { mode, page, pageSize }: Parameters<Store['listReceipts']>[0],
): Promise<Page<ReceiptSummary>> {
  const { db } = reader;
  const pending = pendingNow(reader)
    .filter((row) => !mode || row.mode === mode)
    .sort(newestFirst);
  const offset = (page - 1) * pageSize;
  // Table rows that can fall in the page: at most `pending.length` pending rows come before any of them.
  const from = Math.max(0, offset - pending.length);
  const conditions = [
    ...(mode ? ['mode = ?'] : []),
    ...(pending.length > 0 ? ['id NOT IN (SELECT unnest(?::VARCHAR[]))'] : []),
  ];
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const args = [
    ...(mode ? [mode] : []),
    ...(pending.length > 0 ? [listValue(pending.map((row) => row.id))] : []),
  ];
  const total = await select(db, `SELECT count(*)::INTEGER AS n FROM receipts ${where}`, args);
  const limit = offset + pageSize - from;
  const rows = await select(
    db,
    `SELECT id, type, issued_at, url, method, verdict, reason, check_type, mode, tier FROM receipts ${where}
     ORDER BY issued_at DESC, id DESC LIMIT ${limit} OFFSET ${from}`,
    args,
  );
  const items = mergePage(rows, pending.map(asStored), { from, limit, offset, pageSize });
  return {
    items: items.map(toReceiptSummary),
    total: Number(total[0]?.n ?? 0) + pending.length,
    page,
    pageSize,
  };
}

/**
 * The rows at `offset` .. `offset + pageSize` of the table's rows and the pending ones merged newest first, given
 * the table's rows from its rank `from` (`limit` asked; fewer means the table ends) and every pending row, both
 * newest first. A pending row newer than the first table row read is placed exactly only when `from` is 0; when
 * `from` is more, it ranks before `offset` (at most `pending.length - 1` pending rows and `from` table rows come
 * before it), so it is left out. One older than the last table row read ranks at `offset + pageSize` or later when
 * the table goes on, so it is left out too. The rest fall between table rows, each rank known.
 */
export function mergePage(
  table: Array<Record<string, unknown>>,
  pending: Array<Record<string, unknown>>,
  at: { from: number; limit: number; offset: number; pageSize: number },
): Array<Record<string, unknown>> {
  const first = table[0];
  const last = table.at(-1);
  const tableEnds = table.length < at.limit;
  const before = (a: Record<string, unknown>, b: Record<string, unknown>) =>
    String(a.issued_at) > String(b.issued_at) ||
    (String(a.issued_at) === String(b.issued_at) && String(a.id) > String(b.id));
  let start = at.from;
  const kept: Array<Record<string, unknown>> = [];
  for (const row of pending) {
    if (first && before(row, first) && at.from > 0) {
      start++;
      continue;
    }
    if (last && !tableEnds && before(last, row)) continue;
    kept.push(row);
  }
  const merged: Array<Record<string, unknown>> = [];
  let t = 0;
  let p = 0;
  while (t < table.length || p < kept.length) {
    const next =
      p < kept.length &&
      (t >= table.length || before(kept[p] as Record<string, unknown>, table[t] as Record<string, unknown>))
        ? kept[p++]
        : table[t++];
    merged.push(next as Record<string, unknown>);
  }
  return merged.slice(at.offset - start, at.offset - start + at.pageSize);
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
