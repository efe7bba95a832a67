/**
 * The watch store's port (docs/api.md "Watches"): watches, the schedule of the endpoints they watch (next due time
 * and a lease), the signed events, and the webhook outbox. Two backends: DuckDB in its own file under `DATA_DIR`
 * (`duckdb.ts`, the embedded default; each call one transaction, so what it acknowledged survives a SIGKILL) and
 * PostgreSQL (`postgres.ts`, `DATABASE_URL`), where due endpoints and deliveries are leased with
 * `FOR UPDATE SKIP LOCKED` so each is taken by exactly one instance. Both pass
 * `test/integration/io/watches.contract.test.ts`. Times the store compares are epoch milliseconds of the injected
 * clock.
 */

import type { HttpMethod } from '../../core/model.ts';
import type { WatchEventType, WatchState } from '../../core/watch-events.ts';

/** Who made a watch: a buyer through x402 (the settlement), a hosted integrator key, or an exempt key. */
export type WatchOwner =
  | { kind: 'paid'; tx: string }
  | { kind: 'hosted'; integrator: string; keyId: string }
  | { kind: 'exempt'; name: string };

/**
 * `active` watches are probed and deliver; `paused` after 24 h of failed deliveries; `stopped` after a 410;
 * `opted_out` once the host of its endpoint is on the opt-out list.
 */
export type WatchStatus = 'active' | 'paused' | 'stopped' | 'opted_out' | 'deleted';

/** One watch as stored. `tokenHash` is the sha256 (hex) of its management token; the token itself is never kept. */
export type WatchRow = {
  id: string;
  tokenHash: string;
  url: string;
  urlNorm: string;
  method: HttpMethod;
  payTo: string | null;
  network: string | null;
  claimedPrice: string | null;
  webhookUrl: string | null;
  events: WatchEventType[];
  owner: WatchOwner;
  createdAt: string;
  expiresAtMs: number;
  status: WatchStatus;
  /** `watch_expiring` was recorded. */
  expiringSent: boolean;
};

/**
 * An endpoint leased for one probe: its URL and method, its states by expectation key, and the lease's end, which
 * also names the lease: a later claim of the row (after this one ran out) always sets a later end.
 */
export type DueEndpoint = {
  url: string;
  method: HttpMethod;
  states: Record<string, WatchState>;
  leaseUntil: number;
};

/** What one probe of a leased endpoint found: its states, its next due time, the events it made. */
export type ProbeResult = {
  states: Record<string, WatchState>;
  nextDueMs: number;
  events: NewEvent[];
  nowMs: number;
};

/** A signed event as kept for its watch's owner; `body` is its JSON text exactly as signed and sent. */
export type StoredEvent = { id: string; watchId: string; event: string; occurredAt: string; body: string };

/** An event to record: sent to `webhookUrl` through the outbox when not null. */
export type NewEvent = StoredEvent & { webhookUrl: string | null };

/** A delivery leased for one attempt. */
export type Delivery = {
  eventId: string;
  watchId: string;
  webhookUrl: string;
  body: string;
  attempts: number;
  firstDueMs: number;
  /** The end of this attempt's lease (see {@link DueEndpoint}). */
  leaseUntil: number;
};

/** The watch store. */
export type WatchStore = {
  /** Stores a watch and schedules its endpoint (due at once when new). Durable once resolved. */
  createWatch(row: WatchRow, nowMs: number): Promise<void>;
  watch(id: string): Promise<WatchRow | null>;
  /**
   * Sets a watch's status; any status but `active` cancels its pending deliveries and, the first time, ends its
   * active span at `nowMs` (what {@link WatchStore.watchMonths} bills).
   */
  setStatus(id: string, status: WatchStatus, nowMs: number): Promise<void>;
  /**
   * Makes a watch that is not active (paused, stopped, opted out) active again, in one transaction: its active span
   * starts again (`ended_at` cleared, so the months it is active in are billed), and every delivery of it that was
   * cancelled or given up is pending again, due at `nowMs` with a fresh backoff window and its same event id (the
   * same `webhook-id`). Resolves with the number of deliveries put back; 0 for an active or deleted watch, which it
   * leaves as they are.
   */
  resume(id: string, nowMs: number): Promise<number>;
  /** The active, unexpired watches of one endpoint. */
  activeWatchesOf(url: string, method: HttpMethod, nowMs: number): Promise<WatchRow[]>;
  /** The watches a hosted integrator made (any status but deleted), newest first. */
  watchesOfIntegrator(integrator: string): Promise<WatchRow[]>;
  /**
   * Per integrator, its hosted watches whose active span (made, to the earliest of expiry and the first status but
   * `active`) overlaps `[startMs, endMs)`: the watch-months of a month's invoice. Integrators with none are absent.
   */
  watchMonths(startMs: number, endMs: number): Promise<Map<string, number>>;
  /** Leases up to `limit` endpoints due at `nowMs` with an active watch, for `leaseMs`; none is leased twice. */
  claimDue(nowMs: number, leaseMs: number, limit: number): Promise<DueEndpoint[]>;
  /**
   * Ends a probe, in one transaction and only while `endpoint.leaseUntil` is still its lease: records the events
   * and their deliveries (acknowledged into the outbox), marks the watches of its `watch_expiring` events, puts
   * those of its `watch_opted_out` notices in status `opted_out` (as {@link WatchStore.setStatus} would), stores
   * the states and the next due time, and releases the lease. Resolves false, having written nothing, when the
   * lease ran out and another instance may have taken the endpoint: its probe, not this one, tells the watches.
   */
  finishProbe(endpoint: Omit<DueEndpoint, 'states'>, result: ProbeResult): Promise<boolean>;
  /** Gives a leased endpoint back unprobed (due as it was), if the lease is still `leaseUntil`. */
  releaseProbe(endpoint: Omit<DueEndpoint, 'states'>): Promise<void>;
  /** Records events and their deliveries in one transaction: acknowledged into the outbox once resolved. */
  record(events: NewEvent[], nowMs: number): Promise<void>;
  /** A watch's events, newest first; `beforeSeq` pages on (the `seq` of the last one seen). */
  events(
    watchId: string,
    page: { beforeSeq: number | null; limit: number },
  ): Promise<Array<StoredEvent & { seq: number }>>;
  /** Leases up to `limit` pending deliveries due at `nowMs`, for `leaseMs`. */
  claimDeliveries(nowMs: number, leaseMs: number, limit: number): Promise<Delivery[]>;
  /** Gives a leased delivery back unattempted (due as it was), if its lease is still `leaseUntil`. */
  releaseDelivery(eventId: string, leaseUntil: number): Promise<void>;
  delivered(eventId: string): Promise<void>;
  retryAt(eventId: string, attempts: number, atMs: number, error: string): Promise<void>;
  giveUp(eventId: string, error: string): Promise<void>;
  /** Pending deliveries (tests, metrics). */
  pending(): Promise<number>;
  close(): Promise<void>;
};
