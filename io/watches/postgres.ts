/**
 * The watch store (`port.ts`) in PostgreSQL, shared by every instance (`DATABASE_URL`). An endpoint due for a
 * probe and a delivery due for an attempt are each leased by one statement that picks rows
 * `FOR UPDATE SKIP LOCKED` and sets their lease: of instances claiming at once, each row goes to exactly one, and
 * a row whose instance died is free again when its lease ends (docs/decisions.md "Watches").
 */
import type { Sql } from 'postgres';
import {
  deliveryOf,
  eventOf,
  statesOf,
  WATCH_COLUMNS,
  watchMonthsOf,
  watchOf,
  watchValues,
} from './_rows.ts';
import type { NewEvent, WatchStore } from './port.ts';

/** The store over `sql` (its schema made by `io/postgres/schema.ts`). */
// long: the port as one object literal, one statement (or one transaction) per call
export function postgresWatchStore(sql: Sql): WatchStore {
  const big = (n: number) => String(Math.trunc(n));
  return {
    async createWatch(row, nowMs) {
      await sql.begin(async (tx) => {
        await tx.unsafe(
          `INSERT INTO watches (${WATCH_COLUMNS}) VALUES (${watchValues(row)
            .map((_, i) => `$${i + 1}`)
            .join(', ')})`,
          watchValues(row) as never[],
        );
        await tx`INSERT INTO watch_endpoints (url, method, next_due, lease_until)
          VALUES (${row.url}, ${row.method}, ${big(nowMs)}, 0) ON CONFLICT (url, method) DO NOTHING`;
      });
    },
    async watch(id) {
      const [row] = await sql`SELECT * FROM watches WHERE id = ${id}`;
      return row ? watchOf(row) : null;
    },
    async setStatus(id, status, nowMs) {
      await sql.begin(async (tx) => {
        await tx`UPDATE watches SET status = ${status} WHERE id = ${id}`;
        if (status !== 'active') {
          await tx`UPDATE watches SET ended_at = coalesce(ended_at, ${big(nowMs)}) WHERE id = ${id}`;
          await tx`UPDATE watch_outbox SET state = 'cancelled' WHERE watch_id = ${id} AND state = 'pending'`;
        }
      });
    },
    resume: (id, nowMs) =>
      sql.begin(async (tx) => {
        const [row] = await tx`SELECT status FROM watches WHERE id = ${id} FOR UPDATE`;
        if (!row || row.status === 'active' || row.status === 'deleted') return 0;
        await tx`UPDATE watches SET status = 'active', ended_at = NULL WHERE id = ${id}`;
        const back =
          await tx`UPDATE watch_outbox SET state = 'pending', attempts = 0, first_due = ${big(nowMs)},
          next_attempt = ${big(nowMs)}, lease_until = 0
          WHERE watch_id = ${id} AND state IN ('cancelled', 'failed') RETURNING event_id`;
        return back.length;
      }),
    async activeWatchesOf(url, method, nowMs) {
      const rows = await sql`SELECT * FROM watches WHERE url = ${url} AND method = ${method}
        AND status = 'active' AND expires_at > ${big(nowMs)} ORDER BY id`;
      return rows.map(watchOf);
    },
    async watchesOfIntegrator(integrator) {
      const rows = await sql`SELECT * FROM watches WHERE owner_key = ${integrator} AND status <> 'deleted'
        ORDER BY created_at DESC, id`;
      return rows.map(watchOf);
    },
    async watchMonths(startMs, endMs) {
      return watchMonthsOf(
        await sql`SELECT owner_key, count(*)::int AS n FROM watches
          WHERE owner_key IS NOT NULL AND created_at < ${new Date(endMs).toISOString()}
            AND least(expires_at, coalesce(ended_at, expires_at)) > ${big(startMs)}
          GROUP BY owner_key`,
      );
    },
    async claimDue(nowMs, leaseMs, limit) {
      const rows = await sql`UPDATE watch_endpoints e SET lease_until = ${big(nowMs + leaseMs)}
        FROM (SELECT d.url, d.method FROM watch_endpoints d
              WHERE d.next_due <= ${big(nowMs)} AND d.lease_until <= ${big(nowMs)}
                AND EXISTS (SELECT 1 FROM watches w WHERE w.url = d.url AND w.method = d.method
                  AND w.status = 'active' AND w.expires_at > ${big(nowMs)})
              ORDER BY d.next_due LIMIT ${limit} FOR UPDATE SKIP LOCKED) due
        WHERE e.url = due.url AND e.method = due.method
        RETURNING e.url, e.method, e.states, e.lease_until`;
      return rows.map((r) => ({
        url: String(r.url),
        method: String(r.method) as 'GET' | 'POST',
        states: statesOf(r.states),
        leaseUntil: Number(r.lease_until),
      }));
    },
    finishProbe: (endpoint, result) =>
      sql.begin(async (tx) => {
        // The row lock this takes keeps every other claim off the endpoint until the events are in.
        const held = await tx`UPDATE watch_endpoints SET states = ${JSON.stringify(result.states)},
          next_due = ${big(result.nextDueMs)}, lease_until = 0
          WHERE url = ${endpoint.url} AND method = ${endpoint.method}
            AND lease_until = ${big(endpoint.leaseUntil)} RETURNING url`;
        if (held.length === 0) return false;
        await insertEvents(tx as unknown as Sql, result.events, result.nowMs);
        const expiring = result.events.filter((e) => e.event === 'watch_expiring').map((e) => e.watchId);
        if (expiring.length > 0)
          await tx`UPDATE watches SET expiring_sent = true WHERE id = ANY(${expiring})`;
        const optedOut = result.events.filter((e) => e.event === 'watch_opted_out').map((e) => e.watchId);
        if (optedOut.length > 0) {
          await tx`UPDATE watches SET status = 'opted_out', ended_at = coalesce(ended_at, ${big(result.nowMs)})
            WHERE id = ANY(${optedOut}) AND status = 'active'`;
          await tx`UPDATE watch_outbox SET state = 'cancelled'
            WHERE watch_id = ANY(${optedOut}) AND state = 'pending'`;
        }
        return true;
      }),
    async releaseProbe(endpoint) {
      await sql`UPDATE watch_endpoints SET lease_until = 0 WHERE url = ${endpoint.url}
        AND method = ${endpoint.method} AND lease_until = ${big(endpoint.leaseUntil)}`;
    },
    async record(events, nowMs) {
      await sql.begin((tx) => insertEvents(tx as unknown as Sql, events, nowMs));
    },
    async events(watchId, page) {
      const rows =
        page.beforeSeq === null
          ? await sql`SELECT * FROM watch_events WHERE watch_id = ${watchId} ORDER BY seq DESC LIMIT ${page.limit}`
          : await sql`SELECT * FROM watch_events WHERE watch_id = ${watchId} AND seq < ${big(page.beforeSeq)}
              ORDER BY seq DESC LIMIT ${page.limit}`;
      return rows.map(eventOf);
    },
    async claimDeliveries(nowMs, leaseMs, limit) {
      const rows = await sql`UPDATE watch_outbox o SET lease_until = ${big(nowMs + leaseMs)}
        FROM (SELECT event_id FROM watch_outbox
              WHERE state = 'pending' AND next_attempt <= ${big(nowMs)} AND lease_until <= ${big(nowMs)}
              ORDER BY next_attempt LIMIT ${limit} FOR UPDATE SKIP LOCKED) due
        WHERE o.event_id = due.event_id RETURNING o.*`;
      return rows.map(deliveryOf);
    },
    async releaseDelivery(eventId, leaseUntil) {
      await sql`UPDATE watch_outbox SET lease_until = 0 WHERE event_id = ${eventId}
        AND lease_until = ${big(leaseUntil)}`;
    },
    async delivered(eventId) {
      await sql`UPDATE watch_outbox SET state = 'delivered', lease_until = 0 WHERE event_id = ${eventId}`;
    },
    async retryAt(eventId, attempts, atMs, error) {
      await sql`UPDATE watch_outbox SET attempts = ${attempts}, next_attempt = ${big(atMs)}, lease_until = 0,
        last_error = ${error} WHERE event_id = ${eventId}`;
    },
    async giveUp(eventId, error) {
      await sql`UPDATE watch_outbox SET state = 'failed', lease_until = 0, last_error = ${error}
        WHERE event_id = ${eventId}`;
    },
    async pending() {
      const [row] = await sql`SELECT count(*)::int AS n FROM watch_outbox WHERE state = 'pending'`;
      return Number(row?.n ?? 0);
    },
    close: async () => {},
  };
}

/** Inserts events and the deliveries of those with a webhook (inside the caller's transaction). */
async function insertEvents(tx: Sql, events: NewEvent[], nowMs: number): Promise<void> {
  const at = String(Math.trunc(nowMs));
  for (const e of events) {
    await tx`INSERT INTO watch_events (id, watch_id, event, occurred_at, body)
      VALUES (${e.id}, ${e.watchId}, ${e.event}, ${e.occurredAt}, ${e.body})`;
    if (e.webhookUrl === null) continue;
    await tx`INSERT INTO watch_outbox VALUES (${e.id}, ${e.watchId}, ${e.webhookUrl}, ${e.body}, 0,
      ${at}, ${at}, 0, 'pending', NULL)`;
  }
}
