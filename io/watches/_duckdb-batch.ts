/**
 * The watch store's hot calls on DuckDB as set statements (`duckdb.ts`). DuckDB answers a point query or update
 * by scanning the table (an indexed lookup with bound values is not used), so at 100,000 watches one statement
 * per endpoint cost milliseconds each and the watcher could not probe 167 endpoints a second (BENCHMARKS.md
 * "watches-scale"). Here the calls that come many at a time are coalesced: callers that arrive while the store's
 * queue is busy share one statement (one scan) and, for writes, one commit (a group commit: each caller resolves
 * only once the commit that holds its change is done, so what resolved is as durable as before).
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { CHUNK, select } from '../duckdb/query.ts';
import { deliveryOf, statesOf, watchOf } from './_rows.ts';
import type { Delivery, DueEndpoint, ProbeResult, WatchRow } from './port.ts';

// The coalescing itself is shared with the index's reads (`io/duckdb/coalesce.ts`).
export { coalesced, type Serial } from '../duckdb/coalesce.ts';

/** `VALUES (?, ?), (?, ?)…` for `rows` rows of `width` values. */
function valuesList(rows: number, width: number): string {
  const one = `(${Array(width).fill('?').join(', ')})`;
  return Array(rows).fill(one).join(', ');
}

/** The chunks of `items`, at most {@link CHUNK} each. */
function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * `activeWatchesOf` for many endpoints at once: one scan of `watches` per chunk. Each ask gets the rows of its own
 * `VALUES` row (by its index), so two asks of one endpoint in a batch (a probe and a delisting) each get its watches
 * once, not both asks' rows.
 */
export async function activeWatchesMany(
  db: DuckDBConnection,
  asks: Array<{ url: string; method: string; nowMs: number }>,
): Promise<WatchRow[][]> {
  const found: WatchRow[][] = asks.map(() => []);
  for (let start = 0; start < asks.length; start += CHUNK) {
    const part = asks.slice(start, start + CHUNK);
    const rows = await select(
      db,
      `SELECT a.ask, w.* FROM watches w JOIN (VALUES ${valuesList(part.length, 4)}) a(ask, url, method, now_ms)
         ON w.url = a.url AND w.method = a.method
       WHERE w.status = 'active' AND w.expires_at > a.now_ms ORDER BY a.ask, w.id`,
      part.flatMap((a, i) => [start + i, a.url, a.method, a.nowMs]),
    );
    for (const r of rows) found[Number(r.ask)]?.push(watchOf(r));
  }
  return found;
}

/** Leases up to `limit` due endpoints with an active watch in one statement. */
export async function claimDueOnce(
  db: DuckDBConnection,
  nowMs: number,
  leaseMs: number,
  limit: number,
): Promise<DueEndpoint[]> {
  const rows = await select(
    db,
    // Numbered parameters: DuckDB binds `?` of an UPDATE … FROM (subquery) out of the text's order.
    `UPDATE watch_endpoints SET lease_until = $1 FROM (
       SELECT e.url, e.method FROM watch_endpoints e
       WHERE e.next_due <= $2 AND e.lease_until <= $2 AND EXISTS (SELECT 1 FROM watches w
         WHERE w.url = e.url AND w.method = e.method AND w.status = 'active' AND w.expires_at > $2)
       ORDER BY e.next_due LIMIT $3) d
     WHERE watch_endpoints.url = d.url AND watch_endpoints.method = d.method
     RETURNING watch_endpoints.url, watch_endpoints.method, watch_endpoints.states, watch_endpoints.next_due`,
    [nowMs + leaseMs, nowMs, limit],
  );
  rows.sort((a, b) => Number(a.next_due) - Number(b.next_due));
  return rows.map((r) => ({
    url: String(r.url),
    method: String(r.method) as 'GET' | 'POST',
    states: statesOf(r.states),
    leaseUntil: nowMs + leaseMs,
  }));
}

/**
 * `finishProbe` of probes that made no event, many at once in one transaction: each endpoint's states and next due
 * time, only where its lease is still the caller's. Answers, per probe, whether it was held.
 */
export async function quietFinishMany(
  db: DuckDBConnection,
  done: Array<{ endpoint: Omit<DueEndpoint, 'states'>; result: ProbeResult }>,
): Promise<boolean[]> {
  const held = new Set<string>();
  await db.run('BEGIN TRANSACTION');
  try {
    for (const part of chunks(done)) {
      const rows = await select(
        db,
        `UPDATE watch_endpoints SET states = f.states, next_due = f.next_due, lease_until = 0
         FROM (VALUES ${valuesList(part.length, 5)}) f(url, method, lease, states, next_due)
         WHERE watch_endpoints.url = f.url AND watch_endpoints.method = f.method
           AND watch_endpoints.lease_until = f.lease
         RETURNING watch_endpoints.url, watch_endpoints.method`,
        part.flatMap(({ endpoint, result }): DuckDBValue[] => [
          endpoint.url,
          endpoint.method,
          endpoint.leaseUntil,
          JSON.stringify(result.states),
          result.nextDueMs,
        ]),
      );
      for (const r of rows) held.add(`${String(r.method)} ${String(r.url)}`);
    }
    await db.run('COMMIT');
  } catch (error) {
    await db.run('ROLLBACK');
    throw error;
  }
  return done.map(({ endpoint }) => held.has(`${endpoint.method} ${endpoint.url}`));
}

/** Leases up to `limit` pending deliveries due at `nowMs` in one statement. */
export async function claimDeliveriesOnce(
  db: DuckDBConnection,
  nowMs: number,
  leaseMs: number,
  limit: number,
): Promise<Delivery[]> {
  const rows = await select(
    db,
    `UPDATE watch_outbox SET lease_until = $1 FROM (
       SELECT event_id FROM watch_outbox WHERE state = 'pending' AND next_attempt <= $2 AND lease_until <= $2
       ORDER BY next_attempt LIMIT $3) d
     WHERE watch_outbox.event_id = d.event_id RETURNING watch_outbox.*`,
    [nowMs + leaseMs, nowMs, limit],
  );
  rows.sort((a, b) => Number(a.next_attempt) - Number(b.next_attempt));
  return rows.map((r) => ({ ...deliveryOf(r), leaseUntil: nowMs + leaseMs }));
}

/** `delivered` of many deliveries in one statement (one commit). */
export async function deliveredMany(db: DuckDBConnection, eventIds: string[]): Promise<undefined[]> {
  for (const part of chunks(eventIds)) {
    await db.run(
      `UPDATE watch_outbox SET state = 'delivered', lease_until = 0
       WHERE event_id IN (${part.map(() => '?').join(', ')})`,
      part,
    );
  }
  return eventIds.map(() => undefined);
}

/** `watch(id)` of many ids in one scan. */
export async function watchesMany(db: DuckDBConnection, ids: string[]): Promise<Array<WatchRow | null>> {
  const found = new Map<string, WatchRow>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await select(
      db,
      `SELECT * FROM watches WHERE id IN (${part.map(() => '?').join(', ')})`,
      part,
    );
    for (const r of rows) found.set(String(r.id), watchOf(r));
  }
  return ids.map((id) => found.get(id) ?? null);
}
