/**
 * The PostgreSQL store's reads. A read of receipts first flushes the writer (`_postgres-writer.ts`), so it sees what
 * this instance queued; a read of an endpoint's observations merges in the rows still queued instead of waiting.
 */
import type { Sql } from 'postgres';
import { LIMITS } from '../../core/limits.ts';
import { pickListing } from '../../core/listing-dispute.ts';
import type { HttpMethod, Observation } from '../../core/model.ts';
import type { HostObservation } from '../../core/reputation.ts';
import type { PostgresWriter } from './_postgres-writer.ts';
import { toHostCheck, toListing, toReceiptSummary, toStoredObservation } from './_rows.ts';
import type { Store } from './port.ts';

type ReadMethods = Pick<
  Store,
  | 'observations'
  | 'endpoint'
  | 'receipt'
  | 'latestReceiptByUrl'
  | 'listReceipts'
  | 'listing'
  | 'observationsByHost'
  | 'checksByHost'
  | 'publicChecksByHost'
>;

/** What every read goes through: the pool, and the writer whose queued rows it must see. */
type Reader = { readonly sql: Sql; readonly writer: PostgresWriter };

/** The store's reads over a migrated pool and the store's writer. */
export function postgresReads(sql: Sql, writer: PostgresWriter): ReadMethods {
  const db: Reader = { sql, writer };
  return {
    observations: (urlNorm, method) => observations(db, urlNorm, method),
    endpoint: (urlNorm, method) => endpoint(db, urlNorm, method),
    receipt: (id) => receipt(db, id),
    latestReceiptByUrl: (urlNorm, form) => latestReceiptByUrl(db, urlNorm, form),
    listReceipts: (query) => listReceipts(db, query),
    listing: (urlNorm, method) => listing(db, urlNorm, method),
    observationsByHost: (host, limit) => observationsByHost(db, host, limit),
    checksByHost: (host, limit) => checksByHost(db, host, limit),
    publicChecksByHost: (host, limit) => publicChecksByHost(db, host, limit),
  };
}

/** The table's rows with the queued ones seen before and after the query, newest first, one per time. */
function merged(rows: Observation[], before: Observation[], after: Observation[]): Observation[] {
  const byTime = new Map<string, Observation>();
  for (const item of [...rows, ...before, ...after]) byTime.set(item.observed_at, item);
  return [...byTime.values()]
    .sort((a, b) => b.observed_at.localeCompare(a.observed_at))
    .slice(0, LIMITS.historyKept);
}

async function observations(
  { sql, writer }: Reader,
  urlNorm: string,
  method: HttpMethod,
): Promise<Observation[]> {
  // Read the queues before and after the query: a batch committed while the query ran (on another pooled
  // connection) has left them and may be missing from the rows, but was seen before.
  const before = writer.unflushed(urlNorm, method);
  const rows = await sql`SELECT * FROM observations WHERE url_norm = ${urlNorm} AND method = ${method}
        ORDER BY observed_at DESC LIMIT ${LIMITS.historyKept}`;
  return merged(rows.map(toStoredObservation), before, writer.unflushed(urlNorm, method));
}

async function endpoint({ sql, writer }: Reader, urlNorm: string, method: HttpMethod) {
  // Both reads in one statement: a check waits for one round trip, and the server runs one query, not two.
  // Rows of `kind` 'l' are listings, the others observations (each kind with its own columns, the rest null).
  const before = writer.unflushed(urlNorm, method);
  const rows = await sql`SELECT * FROM (SELECT 'o' AS kind, observed_at, http_status, price_usd,
          amount_atomic, network, asset, pay_to, NULL AS url, NULL AS method, NULL AS source FROM observations
          WHERE url_norm = ${urlNorm} AND method = ${method} ORDER BY observed_at DESC LIMIT ${LIMITS.historyKept}) o
        UNION ALL
        SELECT 'l', NULL, NULL, price_usd, NULL, network, asset, pay_to, url, method, source FROM listings
          WHERE url_norm = ${urlNorm}`;
  const listings = rows.filter((row) => row.kind === 'l').map(toListing);
  const observations = rows.filter((row) => row.kind === 'o').map(toStoredObservation);
  return {
    listing: pickListing(listings, method),
    observations: merged(observations, before, writer.unflushed(urlNorm, method)),
  };
}

async function receipt({ sql, writer }: Reader, id: string): Promise<Record<string, unknown> | null> {
  await writer.flush();
  const [row] = await sql`SELECT body FROM receipts WHERE id = ${id}`;
  return row ? (JSON.parse(String(row.body)) as Record<string, unknown>) : null;
}

async function latestReceiptByUrl(
  { sql, writer }: Reader,
  urlNorm: string,
  form: { url: string; method: HttpMethod },
): Promise<Record<string, unknown> | null> {
  await writer.flush();
  const [row] = await sql`SELECT body FROM receipts WHERE url = ${form.url} AND method = ${form.method}
        AND url_norm = ${urlNorm} AND public_state ORDER BY issued_at DESC, id DESC LIMIT 1`;
  return row ? (JSON.parse(String(row.body)) as Record<string, unknown>) : null;
}

async function listReceipts(
  { sql, writer }: Reader,
  { mode, page, pageSize }: Parameters<Store['listReceipts']>[0],
) {
  await writer.flush();
  const where = mode ? sql`WHERE mode = ${mode}` : sql``;
  const [total] = await sql`SELECT count(*)::int AS n FROM receipts ${where}`;
  const rows = await sql`SELECT id, type, issued_at, url, method, verdict, reason, check_type, mode, tier
        FROM receipts ${where} ORDER BY issued_at DESC, id DESC LIMIT ${pageSize} OFFSET ${(page - 1) * pageSize}`;
  return { items: rows.map(toReceiptSummary), total: Number(total?.n ?? 0), page, pageSize };
}

async function listing({ sql }: Reader, urlNorm: string, method: HttpMethod) {
  const rows = await sql`SELECT * FROM listings WHERE url_norm = ${urlNorm}`;
  return pickListing(rows.map(toListing), method);
}

async function observationsByHost(
  { sql, writer }: Reader,
  host: string,
  limit: number,
): Promise<HostObservation[]> {
  await writer.flush();
  const rows = await sql`SELECT * FROM (SELECT method || ' ' || url_norm AS endpoint, *, row_number() OVER
          (PARTITION BY url_norm, method ORDER BY observed_at DESC) AS n FROM observations WHERE host = ${host}) o
        WHERE n <= ${LIMITS.historyKept} ORDER BY observed_at DESC, endpoint LIMIT ${Math.max(0, Math.floor(limit))}`;
  return rows.map(
    (row): HostObservation => ({ ...toStoredObservation(row), endpoint: String(row.endpoint) }),
  );
}

async function checksByHost({ sql, writer }: Reader, host: string, limit: number) {
  await writer.flush();
  const rows = await sql`SELECT verdict, reason, issued_at, body FROM receipts
        WHERE host = ${host} AND type = 'check' AND verdict IS NOT NULL
        ORDER BY issued_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`;
  return rows.map(toHostCheck);
}

async function publicChecksByHost(
  { sql, writer }: Reader,
  host: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  await writer.flush();
  // `PUBLIC_FORMS_OF_HOST` (io/store/_rows.ts): the listed forms of the host's endpoints, else their newest pay's.
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
}
