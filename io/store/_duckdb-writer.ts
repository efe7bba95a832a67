/**
 * The DuckDB store's writer: receipt and observation rows queue in memory and go to the index in batches, at most
 * {@link FLUSH_EVERY_MS} after they arrive or at once past {@link FLUSH_AT_ROWS}. The journal already made them
 * durable, and a multi-row insert costs about what a single one does.
 */
import type { HttpMethod, Observation } from '../../core/model.ts';
import type { IndexWrites } from './_duckdb-index-writes.ts';
import { serialFlush } from './_rows.ts';
import type { ObservationRow, ReceiptRow } from './port.ts';

/** The index trails the journal by at most this much; fewer, larger commits keep DuckDB's own fsyncs from
 *  slowing the journal's (bench/journal.ts measured a 4-5x slowdown at a 25 ms interval). */
const FLUSH_EVERY_MS = 1000;
const FLUSH_AT_ROWS = 5000;

/** The queue of rows on their way to the index. */
export type IndexWriter = {
  /** Queues receipt rows. */
  receipts(rows: readonly ReceiptRow[]): void;
  /** Queues one observation. */
  observation(row: ObservationRow): void;
  /**
   * Receipt rows not surely in the table yet (queued, or being inserted right now). A read takes them with the table
   * instead of flushing first (`_duckdb-reads.ts`), so it never waits for a pass or a run chunk.
   */
  pendingReceipts(): readonly ReceiptRow[];
  /** Observations of one endpoint not yet in the table (queued, being inserted right now, or held). */
  unflushed(urlNorm: string, method: HttpMethod): Observation[];
  /**
   * Counts `rows`, written to the table by another path (a crawl run's import), as unflushed until the returned
   * release is called once they are committed, so an endpoint's cache loaded meanwhile does not miss them.
   */
  hold(rows: readonly ObservationRow[]): () => void;
  /** Resolves once a pass started after the call has written what was queued when it started. */
  flush(): Promise<void>;
  /**
   * Runs `work` (a crawl run's chunk, written on a connection of its own) between two passes, never beside one:
   * DuckDB refuses one of two overlapping inserts into a keyed table, and the refused pass then went in row by row
   * (one `GET /v1/receipts` waited 108 s behind that during a 50,000-receipt ingest). The receipt reads do not flush
   * (they add {@link IndexWriter.pendingReceipts}), so they wait for neither; a read of a host's rows still flushes
   * and waits for at most the one chunk under way.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
};

/** Creates the writer over the index's prepared writes. */
export function createIndexWriter(writes: IndexWrites): IndexWriter {
  let receiptQueue: ReceiptRow[] = [];
  let observationQueue: ObservationRow[] = [];
  let inFlight: ObservationRow[] = [];
  let receiptsInFlight: ReceiptRow[] = [];
  const held = new Set<readonly ObservationRow[]>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const run = turn.then(work);
    turn = run.catch(() => {});
    return run;
  };

  // One pass over what is queued when it starts: a flush waits for the rows queued before it, never for rows that
  // keep arriving under load (a loop until the queues are empty never ends while checks keep coming).
  const drain = (): Promise<void> => exclusive(pass);
  const pass = async (): Promise<void> => {
    receiptsInFlight = receiptQueue;
    inFlight = observationQueue;
    receiptQueue = [];
    observationQueue = [];
    try {
      await writes.receipts(receiptsInFlight);
    } finally {
      // Committed (or refused for good): a read that starts from here on finds them in the table.
      receiptsInFlight = [];
    }
    await writes.observations(inFlight);
    inFlight = [];
  };
  const serial = serialFlush(drain, () => receiptQueue.length > 0 || observationQueue.length > 0);
  const flush = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    await serial.flush();
  };
  const schedule = () => {
    timer ??= setTimeout(() => {
      timer = null;
      flush().catch((error: unknown) => console.error('[spotcheck] [store] index flush failed', error));
    }, FLUSH_EVERY_MS);
    if (receiptQueue.length + observationQueue.length >= FLUSH_AT_ROWS) void flush().catch(() => {});
  };
  return {
    receipts(rows) {
      for (const row of rows) receiptQueue.push(row);
      schedule();
    },
    observation(row) {
      observationQueue.push(row);
      schedule();
    },
    pendingReceipts: () =>
      receiptsInFlight.length === 0 ? receiptQueue.slice() : [...receiptsInFlight, ...receiptQueue],
    unflushed: (urlNorm, method) =>
      [...inFlight, ...observationQueue, ...[...held].flat()]
        .filter(([u, m]) => u === urlNorm && m === method)
        .map(([, , o]) => o),
    hold(rows) {
      held.add(rows);
      return () => held.delete(rows);
    },
    flush,
    exclusive,
  };
}
