/**
 * The watch store (`port.ts`) in its own DuckDB file (`watches.duckdb` under `DATA_DIR`), the embedded default:
 * one process, calls run one at a time, each one transaction, so what a call acknowledged is in DuckDB's
 * write-ahead log and survives a SIGKILL. `':memory:'` gives a store that forgets (tests).
 */
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { select } from '../duckdb/query.ts';
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

const SCHEMA = `
CREATE SEQUENCE IF NOT EXISTS watch_event_seq;
CREATE TABLE IF NOT EXISTS watches (
  id VARCHAR PRIMARY KEY, token_hash VARCHAR NOT NULL, url VARCHAR NOT NULL, url_norm VARCHAR NOT NULL,
  method VARCHAR NOT NULL, pay_to VARCHAR, network VARCHAR, claimed_price VARCHAR, webhook_url VARCHAR,
  events VARCHAR NOT NULL, owner VARCHAR NOT NULL, owner_key VARCHAR, created_at VARCHAR NOT NULL,
  expires_at BIGINT NOT NULL, status VARCHAR NOT NULL, expiring_sent BOOLEAN NOT NULL);
CREATE TABLE IF NOT EXISTS watch_endpoints (
  url VARCHAR NOT NULL, method VARCHAR NOT NULL, next_due BIGINT NOT NULL, lease_until BIGINT NOT NULL,
  states VARCHAR, PRIMARY KEY (url, method));
CREATE TABLE IF NOT EXISTS watch_events (
  seq BIGINT NOT NULL DEFAULT nextval('watch_event_seq'), id VARCHAR PRIMARY KEY, watch_id VARCHAR NOT NULL,
  event VARCHAR NOT NULL, occurred_at VARCHAR NOT NULL, body VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS watch_outbox (
  event_id VARCHAR PRIMARY KEY, watch_id VARCHAR NOT NULL, webhook_url VARCHAR NOT NULL, body VARCHAR NOT NULL,
  attempts INTEGER NOT NULL, first_due BIGINT NOT NULL, next_attempt BIGINT NOT NULL, lease_until BIGINT NOT NULL,
  state VARCHAR NOT NULL, last_error VARCHAR);
ALTER TABLE watches ADD COLUMN IF NOT EXISTS ended_at BIGINT;
`;

/** Opens (or creates) the store at `path`. */
// long: the port as one object literal, one short statement per call, as the other DuckDB stores are
export async function openDuckDbWatchStore(path: string): Promise<WatchStore> {
  const instance = await DuckDBInstance.create(path);
  const db = await instance.connect();
  await db.run(SCHEMA);
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const rows = (sql: string, values: DuckDBValue[] = []) => serial(() => select(db, sql, values));
  const run = (sql: string, values: DuckDBValue[] = []) =>
    serial(() => db.run(sql, values)).then(() => undefined);

  return {
    createWatch: (row, nowMs) =>
      serial(() =>
        transaction(db, async () => {
          await db.run(
            `INSERT INTO watches (${WATCH_COLUMNS}) VALUES (${placeholders(17)})`,
            watchValues(row),
          );
          await db.run(
            'INSERT INTO watch_endpoints VALUES (?, ?, ?, 0, NULL) ON CONFLICT (url, method) DO NOTHING',
            [row.url, row.method, nowMs],
          );
        }),
      ),
    watch: async (id) => {
      const [row] = await rows('SELECT * FROM watches WHERE id = ?', [id]);
      return row ? watchOf(row) : null;
    },
    setStatus: (id, status, nowMs) =>
      serial(() =>
        transaction(db, async () => {
          await db.run('UPDATE watches SET status = ? WHERE id = ?', [status, id]);
          if (status !== 'active') {
            await db.run('UPDATE watches SET ended_at = coalesce(ended_at, ?) WHERE id = ?', [nowMs, id]);
            await db.run(
              "UPDATE watch_outbox SET state = 'cancelled' WHERE watch_id = ? AND state = 'pending'",
              [id],
            );
          }
        }),
      ),
    activeWatchesOf: async (url, method, nowMs) =>
      (
        await rows(
          "SELECT * FROM watches WHERE url = ? AND method = ? AND status = 'active' AND expires_at > ? ORDER BY id",
          [url, method, nowMs],
        )
      ).map(watchOf),
    watchesOfIntegrator: async (integrator) =>
      (
        await rows(
          "SELECT * FROM watches WHERE owner_key = ? AND status <> 'deleted' ORDER BY created_at DESC, id",
          [integrator],
        )
      ).map(watchOf),
    watchMonths: async (startMs, endMs) =>
      watchMonthsOf(
        await rows(
          `SELECT owner_key, count(*) AS n FROM watches
           WHERE owner_key IS NOT NULL AND created_at < ?
             AND least(expires_at, coalesce(ended_at, expires_at)) > ?
           GROUP BY owner_key`,
          [new Date(endMs).toISOString(), startMs],
        ),
      ),
    claimDue: (nowMs, leaseMs, limit) =>
      serial(async () => {
        const due = await select(
          db,
          `SELECT e.url, e.method, e.states FROM watch_endpoints e
           WHERE e.next_due <= ? AND e.lease_until <= ? AND EXISTS (SELECT 1 FROM watches w
             WHERE w.url = e.url AND w.method = e.method AND w.status = 'active' AND w.expires_at > ?)
           ORDER BY e.next_due LIMIT ?`,
          [nowMs, nowMs, nowMs, limit],
        );
        for (const r of due) {
          await db.run('UPDATE watch_endpoints SET lease_until = ? WHERE url = ? AND method = ?', [
            nowMs + leaseMs,
            String(r.url),
            String(r.method),
          ]);
        }
        return due.map((r) => ({
          url: String(r.url),
          method: String(r.method) as 'GET' | 'POST',
          states: statesOf(r.states),
          leaseUntil: nowMs + leaseMs,
        }));
      }),
    finishProbe: (endpoint, result) =>
      serial(async () => {
        const [held] = await select(
          db,
          'SELECT 1 AS held FROM watch_endpoints WHERE url = ? AND method = ? AND lease_until = ?',
          [endpoint.url, endpoint.method, endpoint.leaseUntil],
        );
        if (!held) return false;
        await transaction(db, async () => {
          await insertEvents(db, result.events, result.nowMs);
          for (const e of result.events.filter((x) => x.event === 'watch_expiring')) {
            await db.run('UPDATE watches SET expiring_sent = true WHERE id = ?', [e.watchId]);
          }
          await db.run(
            'UPDATE watch_endpoints SET states = ?, next_due = ?, lease_until = 0 WHERE url = ? AND method = ?',
            [JSON.stringify(result.states), result.nextDueMs, endpoint.url, endpoint.method],
          );
        });
        return true;
      }),
    releaseProbe: (endpoint) =>
      run('UPDATE watch_endpoints SET lease_until = 0 WHERE url = ? AND method = ? AND lease_until = ?', [
        endpoint.url,
        endpoint.method,
        endpoint.leaseUntil,
      ]),
    record: (events, nowMs) => serial(() => transaction(db, () => insertEvents(db, events, nowMs))),
    events: async (watchId, page) =>
      (
        await rows(
          `SELECT * FROM watch_events WHERE watch_id = ? ${page.beforeSeq === null ? '' : 'AND seq < ?'}
           ORDER BY seq DESC LIMIT ?`,
          page.beforeSeq === null ? [watchId, page.limit] : [watchId, page.beforeSeq, page.limit],
        )
      ).map(eventOf),
    claimDeliveries: (nowMs, leaseMs, limit) =>
      serial(async () => {
        const due = await select(
          db,
          `SELECT * FROM watch_outbox WHERE state = 'pending' AND next_attempt <= ? AND lease_until <= ?
           ORDER BY next_attempt LIMIT ?`,
          [nowMs, nowMs, limit],
        );
        for (const r of due) {
          await db.run('UPDATE watch_outbox SET lease_until = ? WHERE event_id = ?', [
            nowMs + leaseMs,
            String(r.event_id),
          ]);
        }
        return due.map((r) => ({ ...deliveryOf(r), leaseUntil: nowMs + leaseMs }));
      }),
    releaseDelivery: (eventId, leaseUntil) =>
      run('UPDATE watch_outbox SET lease_until = 0 WHERE event_id = ? AND lease_until = ?', [
        eventId,
        leaseUntil,
      ]),
    delivered: (eventId) =>
      run("UPDATE watch_outbox SET state = 'delivered', lease_until = 0 WHERE event_id = ?", [eventId]),
    retryAt: (eventId, attempts, atMs, error) =>
      run(
        'UPDATE watch_outbox SET attempts = ?, next_attempt = ?, lease_until = 0, last_error = ? WHERE event_id = ?',
        [attempts, atMs, error, eventId],
      ),
    giveUp: (eventId, error) =>
      run("UPDATE watch_outbox SET state = 'failed', lease_until = 0, last_error = ? WHERE event_id = ?", [
        error,
        eventId,
      ]),
    pending: async () => {
      const [row] = await rows("SELECT count(*) AS n FROM watch_outbox WHERE state = 'pending'");
      return Number(row?.n ?? 0);
    },
    close: () =>
      serial(async () => {
        db.closeSync();
        instance.closeSync();
      }),
  };
}

/** Inserts events and the deliveries of those with a webhook (the caller holds the queue and a transaction). */
async function insertEvents(db: DuckDBConnection, events: NewEvent[], nowMs: number): Promise<void> {
  for (const e of events) {
    await db.run('INSERT INTO watch_events (id, watch_id, event, occurred_at, body) VALUES (?, ?, ?, ?, ?)', [
      e.id,
      e.watchId,
      e.event,
      e.occurredAt,
      e.body,
    ]);
    if (e.webhookUrl === null) continue;
    await db.run("INSERT INTO watch_outbox VALUES (?, ?, ?, ?, 0, ?, ?, 0, 'pending', NULL)", [
      e.id,
      e.watchId,
      e.webhookUrl,
      e.body,
      nowMs,
      nowMs,
    ]);
  }
}

function placeholders(n: number): string {
  return Array(n).fill('?').join(', ');
}

/** Runs `work` as one transaction on `db` (the caller holds the serial queue). */
async function transaction(db: DuckDBConnection, work: () => Promise<void>): Promise<void> {
  await db.run('BEGIN TRANSACTION');
  try {
    await work();
    await db.run('COMMIT');
  } catch (error) {
    await db.run('ROLLBACK');
    throw error;
  }
}
