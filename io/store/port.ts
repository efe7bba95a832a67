/**
 * The store port: what the service keeps and queries besides the journal. Three implementations pass one
 * contract suite (`test/integration/io/store-contract.ts`): DuckDB (`io/store/duckdb.ts`) for the service, memory
 * (`io/store/memory.ts`) for fast tests, PostgreSQL (`io/store/postgres.ts`), which the service does not open yet.
 *
 * The journal is the durable record; the store is an index rebuilt from it after a crash, so writes here are
 * queued and flushed in batches off the request path. Reads see queued writes (`flush()` first).
 */
import type { PaidCallRecord } from '../../core/catalog.ts';
import type { HttpMethod, Listing, Observation } from '../../core/model.ts';
import type { PublicForm } from '../../core/public-state.ts';
import type { HostCheck, HostObservation } from '../../core/reputation.ts';

/** The indexed columns of a receipt; `body` is the whole signed receipt. */
export type ReceiptRow = {
  id: string;
  type: 'check' | 'payment-status' | 'paid-call';
  issuedAt: string;
  url: string | null;
  urlNorm: string | null;
  method: HttpMethod | null;
  verdict: string | null;
  reason: string | null;
  checkType: string | null;
  mode: 'live' | 'dry-run' | null;
  tier: string;
  body: Record<string, unknown>;
  /**
   * `body` as JSON text when the caller already holds it (the ledger's signed text), so the embedded index stores it
   * without serializing it again. The PostgreSQL store serializes `body` itself: every instance must serve the
   * bytes the issuing instance answered from memory.
   */
  bodyJson?: string;
  /**
   * The ledger writes `body` as this receipt's file (the live service's own receipts). A store opened with
   * `bodies` (the embedded one, `io/receipts/bodies.ts`) then indexes the row's columns only and reads the body
   * back through it, so the index does not hold a second copy of every receipt.
   */
  bodyInFile?: boolean;
};

/** An observation as a store writes it: the endpoint's normalized URL, its method, and what was observed. */
export type ObservationRow = [urlNorm: string, method: HttpMethod, observation: Observation];

export type ReceiptSummary = Omit<ReceiptRow, 'body' | 'bodyJson' | 'bodyInFile' | 'urlNorm'>;

export type Page<T> = { items: T[]; total: number; page: number; pageSize: number };

/** An endpoint's listing (null when none names it) and its last 30 observations, newest first. */
export type EndpointRecord = { listing: Listing | null; observations: Observation[] };

/** {@link Store.endpoint} for a driver that answers both reads locally: the two reads side by side. */
export async function endpointOf(
  store: Pick<Store, 'listing' | 'observations'>,
  urlNorm: string,
  method: HttpMethod,
): Promise<EndpointRecord> {
  const [listing, observations] = await Promise.all([
    store.listing(urlNorm, method),
    store.observations(urlNorm, method),
  ]);
  return { listing, observations };
}

export type Store = {
  /** Queues receipts for the index; idempotent by id. */
  indexReceipts(rows: ReceiptRow[]): void;
  /** Queues an observation of an endpoint (normalized URL and method). */
  addObservation(urlNorm: string, method: HttpMethod, observation: Observation): void;
  /**
   * Takes in the receipts and observations of a published crawl run (already durable in the run's files) and
   * resolves once they are in; idempotent by id. Written apart from the live writes: a read flushes only what was
   * queued by `indexReceipts` and `addObservation`, so it never waits for a large run going in
   * (`io/runs/ingest.ts`). The observations are seen by `observations` at once, as `addObservation`'s are.
   */
  importRunRows(receipts: ReceiptRow[], observations: ObservationRow[]): Promise<void>;
  /** The last 30 observations of an endpoint, newest first. */
  observations(urlNorm: string, method: HttpMethod): Promise<Observation[]>;
  receipt(id: string): Promise<Record<string, unknown> | null>;
  /**
   * The newest receipt of the normalized URL that is public state (`core/public-state.ts`) and was requested in
   * exactly `form` (URL as requested and method; `publicFormOf` picks it), null when none is.
   */
  latestReceiptByUrl(urlNorm: string, form: PublicForm): Promise<Record<string, unknown> | null>;
  /** Receipts newest first; `mode` filters (`dry-run`). */
  listReceipts(query: {
    mode?: 'live' | 'dry-run';
    page: number;
    pageSize: number;
  }): Promise<Page<ReceiptSummary>>;
  listing(urlNorm: string, method: HttpMethod): Promise<Listing | null>;
  /**
   * What a check reads of an endpoint before it decides: its {@link Store.listing} and its
   * {@link Store.observations}, in one read where the store is remote (one round trip to PostgreSQL instead of two).
   */
  endpoint(urlNorm: string, method: HttpMethod): Promise<EndpointRecord>;
  /** Replaces the listings of each source present in `rows`; returns how many were stored. */
  importListings(rows: Array<Listing & { urlNorm: string }>): Promise<number>;
  /** Records one of the service's own paid calls to a catalogued service (docs/api.md §1.4). */
  addPaidCall(record: PaidCallRecord): Promise<void>;
  /** The last `perService` paid calls of each service after the filters: each service's calls newest first
   *  (`newestFirst`); services in no given order (the ranking orders them). A driver may answer the same array
   *  to the same query while no call was added, so it is read-only. */
  paidCalls(query: PaidCallQuery): Promise<readonly PaidCallRecord[]>;
  // The by-host queries below read a `host` column every driver keeps beside the normalized URL ({@link hostOf}),
  // indexed, so a reputation refresh or a badge reads one host's rows, never every receipt.
  /** The newest observations across every endpoint of `host` (URL host, port included), at most 30 per endpoint. */
  observationsByHost(host: string, limit: number): Promise<HostObservation[]>;
  /** The newest check receipts of `host`, newest first. */
  checksByHost(host: string, limit: number): Promise<HostCheck[]>;
  /**
   * The newest receipts of `host` (URL host, port included) that are a URL's public state (`core/public-state.ts`)
   * in their endpoint's form: a listed form of a listed endpoint (any listing names its URL and method), else the
   * URL and method of the endpoint's newest public `pay` (none before one). Whole signed bodies, newest first: what
   * the host's badge shows.
   */
  publicChecksByHost(host: string, limit: number): Promise<Record<string, unknown>[]>;
  flush(): Promise<void>;
  close(): Promise<void>;
};

/**
 * Filters of {@link Store.paidCalls}: `task`; `endpoint`, a service id or endpoint URL; `host`, the URL host of the
 * endpoint.
 */
export type PaidCallQuery = { task?: string; endpoint?: string; host?: string; perService: number };

/** The URL host (port included when not the default) of a normalized URL; null when it has none. */
export function hostOf(urlNorm: string | null): string | null {
  if (urlNorm === null) return null;
  try {
    return new URL(urlNorm).host || null;
  } catch {
    return null;
  }
}
