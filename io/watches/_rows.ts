/**
 * Rows of the watch tables as both backends read and write them (`duckdb.ts`, `postgres.ts`): one mapping, so a
 * watch reads back the same from either.
 */
import type { HttpMethod } from '../../core/model.ts';
import type { WatchEventType, WatchState } from '../../core/watch-events.ts';
import type { Delivery, StoredEvent, WatchOwner, WatchRow, WatchStatus } from './port.ts';

/** The columns of `watches`, in insert order. */
export const WATCH_COLUMNS =
  'id, token_hash, url, url_norm, method, pay_to, network, claimed_price, webhook_url, events, owner, owner_key, created_at, expires_at, status, expiring_sent, ended_at';

/** A watch's insert values, in {@link WATCH_COLUMNS} order. */
export function watchValues(row: WatchRow): Array<string | number | boolean | null> {
  return [
    row.id,
    row.tokenHash,
    row.url,
    row.urlNorm,
    row.method,
    row.payTo,
    row.network,
    row.claimedPrice,
    row.webhookUrl,
    row.events.join(','),
    JSON.stringify(row.owner),
    ownerKey(row.owner),
    row.createdAt,
    row.expiresAtMs,
    row.status,
    row.expiringSent,
    null,
  ];
}

/**
 * The per-integrator counts of the watch-months query read back. Both backends count the watches with an owner key
 * (hosted) made before the month's end (`created_at` is ISO text, compared as ISO text) whose span ends after its
 * start: `least(expires_at, coalesce(ended_at, expires_at))`. `ended_at` is null while a watch is active, and on
 * watches stopped before it was recorded: those count to their expiry.
 */
export function watchMonthsOf(rows: ReadonlyArray<Record<string, unknown>>): Map<string, number> {
  return new Map(rows.map((r) => [String(r.owner_key), Number(r.n)]));
}

/** The owner a listing by owner reads: the integrator of a hosted watch, else null. */
function ownerKey(owner: WatchOwner): string | null {
  return owner.kind === 'hosted' ? owner.integrator : null;
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A `watches` row read back. */
export function watchOf(r: Record<string, unknown>): WatchRow {
  const events = String(r.events ?? '');
  return {
    id: String(r.id),
    tokenHash: String(r.token_hash),
    url: String(r.url),
    urlNorm: String(r.url_norm),
    method: String(r.method) as HttpMethod,
    payTo: text(r.pay_to),
    network: text(r.network),
    claimedPrice: text(r.claimed_price),
    webhookUrl: text(r.webhook_url),
    events: events === '' ? [] : (events.split(',') as WatchEventType[]),
    owner: JSON.parse(String(r.owner)) as WatchOwner,
    createdAt: String(r.created_at),
    expiresAtMs: Number(r.expires_at),
    status: String(r.status) as WatchStatus,
    expiringSent: Boolean(r.expiring_sent),
  };
}

/** The states of an endpoint read back. */
export function statesOf(value: unknown): Record<string, WatchState> {
  return value === null || value === undefined
    ? {}
    : (JSON.parse(String(value)) as Record<string, WatchState>);
}

/** A `watch_events` row read back. */
export function eventOf(r: Record<string, unknown>): StoredEvent & { seq: number } {
  return {
    seq: Number(r.seq),
    id: String(r.id),
    watchId: String(r.watch_id),
    event: String(r.event),
    occurredAt: String(r.occurred_at),
    body: String(r.body),
  };
}

/** A `watch_outbox` row read back. */
export function deliveryOf(r: Record<string, unknown>): Delivery {
  return {
    eventId: String(r.event_id),
    watchId: String(r.watch_id),
    webhookUrl: String(r.webhook_url),
    body: String(r.body),
    attempts: Number(r.attempts),
    firstDueMs: Number(r.first_due),
    leaseUntil: Number(r.lease_until),
  };
}
