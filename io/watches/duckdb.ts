/**
 * The watch store (`port.ts`) in its own DuckDB file (`watches.duckdb` under `DATA_DIR`), the embedded default:
 * one process, calls run one at a time, each one transaction, so what a call acknowledged is in DuckDB's
 * write-ahead log and survives a SIGKILL. `':memory:'` gives a store that forgets (tests).
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { type DuckDbLimits, openDuckDbInstance } from '../duckdb/instance.ts';
import { CHUNK, select } from '../duckdb/query.ts';
import {
  activeWatchesMany,
  claimDeliveriesOnce,
  claimDueOnce,
  coalesced,
  deliveredMany,
  quietFinishMany,
  watchesMany,
} from './_duckdb-batch.ts';
import { eventOf, WATCH_COLUMNS, watchMonthsOf, watchOf, watchValues } from './_rows.ts';
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

/** Opens (or creates) the store at `path`, within `limits` (`io/duckdb/instance.ts`). */
// long: the port as one object literal, one short statement per call, as the other DuckDB stores are
export async function openDuckDbWatchStore(path: string, limits?: DuckDbLimits): Promise<WatchStore> {
  const instance = await openDuckDbInstance(path, limits);
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
  // The calls the watcher makes many at a time share one statement and one commit (`_duckdb-batch.ts`).
  const activeWatches = coalesced(serial, (asks: Array<{ url: string; method: string; nowMs: number }>) =>
    activeWatchesMany(db, asks),
  );
  const quietFinish = coalesced(serial, (done: Parameters<typeof quietFinishMany>[1]) =>
    quietFinishMany(db, done),
  );
  const watchById = coalesced(serial, (ids: string[]) => watchesMany(db, ids));
  const markDelivered = coalesced(serial, (ids: string[]) => deliveredMany(db, ids));

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
    watch: (id) => watchById(id),
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
    resume: (id, nowMs) =>
      serial(async () => {
        const [row] = await select(db, 'SELECT status FROM watches WHERE id = ?', [id]);
        if (!row || row.status === 'active' || row.status === 'deleted') return 0;
        const [back] = await select(
          db,
          "SELECT count(*) AS n FROM watch_outbox WHERE watch_id = ? AND state IN ('cancelled', 'failed')",
          [id],
        );
        await transaction(db, async () => {
          await db.run("UPDATE watches SET status = 'active', ended_at = NULL WHERE id = ?", [id]);
          await db.run(
            `UPDATE watch_outbox SET state = 'pending', attempts = 0, first_due = ?, next_attempt = ?, lease_until = 0
             WHERE watch_id = ? AND state IN ('cancelled', 'failed')`,
            [nowMs, nowMs, id],
          );
        });
        return Number(back?.n ?? 0);
      }),
    activeWatchesOf: (url, method, nowMs) => activeWatches({ url, method, nowMs }),
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
    claimDue: (nowMs, leaseMs, limit) => serial(() => claimDueOnce(db, nowMs, leaseMs, limit)),
    finishProbe: (endpoint, result) =>
      // A probe that made no event only moves its schedule: many of those share one commit.
      result.events.length === 0
        ? quietFinish({ endpoint, result })
        : serial(async () => {
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
              for (const e of result.events.filter((x) => x.event === 'watch_opted_out')) {
                await db.run(
                  "UPDATE watches SET status = 'opted_out', ended_at = coalesce(ended_at, ?) WHERE id = ? AND status = 'active'",
                  [result.nowMs, e.watchId],
                );
                await db.run(
                  "UPDATE watch_outbox SET state = 'cancelled' WHERE watch_id = ? AND state = 'pending'",
                  [e.watchId],
                );
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
    claimDeliveries: (nowMs, leaseMs, limit) => serial(() => claimDeliveriesOnce(db, nowMs, leaseMs, limit)),
    releaseDelivery: (eventId, leaseUntil) =>
      run('UPDATE watch_outbox SET lease_until = 0 WHERE event_id = ? AND lease_until = ?', [
        eventId,
        leaseUntil,
      ]),
    delivered: (eventId) => markDelivered(eventId),
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
  // Multi-row statements: a change of a big host's wallet makes thousands of events in one probe.
  for (const part of chunks(events)) {
    await db.run(
      `INSERT INTO watch_events (id, watch_id, event, occurred_at, body) VALUES ${rowsOf(part.length, 5)}`,
      part.flatMap((e) => [e.id, e.watchId, e.event, e.occurredAt, e.body]),
    );
    const sent = part.filter((e) => e.webhookUrl !== null);
    if (sent.length === 0) continue;
    await db.run(
      `INSERT INTO watch_outbox (event_id, watch_id, webhook_url, body, first_due, next_attempt, attempts,
         lease_until, state, last_error) VALUES ${rowsOf(sent.length, 6, ", 0, 0, 'pending', NULL")}`,
      sent.flatMap((e) => [e.id, e.watchId, e.webhookUrl, e.body, nowMs, nowMs]),
    );
  }
}

/** `(?, …), (?, …)` for `rows` rows of `width` bound values, each row ending with the literal `tail`. */
function rowsOf(rows: number, width: number, tail = ''): string {
  return Array(rows)
    .fill(`(${placeholders(width)}${tail})`)
    .join(', ');
}

function placeholders(n: number): string {
  return Array(n).fill('?').join(', ');
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
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
