/**
 * What the DuckDB and PostgreSQL stores share: the reading of their rows (both keep the same columns) as the port's
 * types, and how queued index writes are flushed.
 */
import type { PaidCallRecord } from '../../core/catalog.ts';
import type { Listing, Observation } from '../../core/model.ts';
import type { HostCheck } from '../../core/reputation.ts';
import type { ReceiptSummary } from './port.ts';

/**
 * SQL (DuckDB and PostgreSQL alike; three `?` for the host) naming `f`: the form of each endpoint of a host whose
 * receipts count on its badge (`Store.publicChecksByHost`, `core/public-state.ts`): every listed URL and method of a
 * listed endpoint; for an endpoint nobody lists, the URL and method of its newest public `pay`, so one never seen
 * paying has none. The PostgreSQL store writes the same with its own placeholders.
 */
export const PUBLIC_FORMS_OF_HOST = `WITH l AS (SELECT url_norm, url, method FROM listings WHERE host = ?),
  p AS (SELECT DISTINCT ON (url_norm) url_norm, url, method FROM receipts
    WHERE host = ? AND public_state AND verdict = 'pay' AND url_norm NOT IN (SELECT url_norm FROM l)
    ORDER BY url_norm, issued_at DESC, id DESC),
  f AS (SELECT url_norm, url, method FROM l UNION ALL SELECT url_norm, url, method FROM p)`;

export function toStoredObservation(row: Record<string, unknown>): Observation {
  return {
    observed_at: String(row.observed_at),
    http_status: row.http_status === null ? null : Number(row.http_status),
    price_usd: row.price_usd === null ? null : Number(row.price_usd),
    amount_atomic: nullableString(row.amount_atomic),
    network: nullableString(row.network),
    asset: nullableString(row.asset),
    pay_to: nullableString(row.pay_to),
  };
}

export function toPaidCall(row: Record<string, unknown>): PaidCallRecord {
  return {
    service_id: String(row.service_id),
    endpoint_url: String(row.endpoint_url),
    task: String(row.task),
    called_at: String(row.called_at),
    price_atomic: String(row.price_atomic),
    network: String(row.network),
    pay_to: String(row.pay_to),
    settlement_tx: nullableString(row.settlement_tx),
    delivered: row.delivered === true,
    known_answer: row.known_answer === 'pass' || row.known_answer === 'fail' ? row.known_answer : null,
    http_status: row.http_status === null ? null : Number(row.http_status),
    broken_on_seller_side: row.broken_on_seller_side === true,
    receipt_id: nullableString(row.receipt_id),
    why: nullableString(row.why),
  };
}

export function toReceiptSummary(row: Record<string, unknown>): ReceiptSummary {
  return {
    id: String(row.id),
    type: row.type === 'payment-status' || row.type === 'paid-call' ? row.type : 'check',
    issuedAt: String(row.issued_at),
    url: nullableString(row.url),
    method: row.method === 'POST' ? 'POST' : row.method === 'GET' ? 'GET' : null,
    verdict: nullableString(row.verdict),
    reason: nullableString(row.reason),
    checkType: nullableString(row.check_type),
    mode: row.mode === 'dry-run' ? 'dry-run' : row.mode === 'live' ? 'live' : null,
    tier: String(row.tier),
  };
}

export function nullableString(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** A check receipt row (`verdict, reason, issued_at, body`) as the reputation rule reads it. */
export function toHostCheck(row: Record<string, unknown>): HostCheck {
  return hostCheckOf(row, JSON.parse(String(row.body)) as Record<string, unknown>);
}

/** {@link toHostCheck} with the receipt's body already read (null: unknown, no expectation source). */
export function hostCheckOf(row: Record<string, unknown>, body: Record<string, unknown> | null): HostCheck {
  const source = body?.expected_source;
  return {
    verdict: String(row.verdict),
    reason: String(row.reason ?? ''),
    at: String(row.issued_at),
    expected_source: source === 'request' || source === 'listing' ? source : null,
  };
}

export function toListing(row: Record<string, unknown>): Listing {
  return {
    url: String(row.url),
    method: row.method === 'POST' ? 'POST' : 'GET',
    priceUsd: row.price_usd === null ? null : Number(row.price_usd),
    network: nullableString(row.network),
    asset: nullableString(row.asset),
    payTo: nullableString(row.pay_to),
    source: String(row.source),
  };
}

/**
 * One flush of queued index writes at a time: `flush()` resolves once everything queued before the call is written,
 * that is once a pass that started after the call has finished (its own, or another caller's), and rows queued
 * during a pass go in the next one (group commit).
 */
export function serialFlush(drain: () => Promise<void>, pending: () => boolean) {
  let flushing: Promise<void> | null = null;
  let started = 0;
  let finished = 0;
  return {
    async flush(): Promise<void> {
      // Rows queued before this call are in once a pass that started after it has finished: anyone's pass will
      // do, so a flush never starves while other callers keep starting passes under load.
      const target = started + 1;
      while (finished < target) {
        if (flushing) {
          await flushing;
          continue;
        }
        if (!pending()) return;
        started++;
        flushing = drain().finally(() => {
          finished++;
          flushing = null;
        });
        await flushing;
      }
    },
    busy: () => flushing !== null,
  };
}

/**
 * Inserts a chunk in one statement; if that fails, row by row, so one row the index cannot take (it stays in the
 * journal and its file) does not keep the others out.
 */
export async function insertChunk<T>(rows: T[], insert: (rows: T[]) => Promise<void>): Promise<void> {
  try {
    await insert(rows);
  } catch {
    for (const row of rows) {
      await insert([row]).catch((error: unknown) =>
        console.error('[spotcheck] [store] row not indexed', error),
      );
    }
  }
}
