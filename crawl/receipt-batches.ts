/**
 * The receipt files of a crawl run, written off the event loop (`io/receipt-file-writer.ts`): the receipts of one
 * turn of the event loop go to the writer thread as one batch, so a probe costs the crawl one array push instead
 * of an open, a write, a close and a rename on the thread pool (which the journal's fsyncs need). Not fsynced:
 * the run's journal is the durable copy, and a resume writes the files of every recorded probe again.
 */
import { readdir } from 'node:fs/promises';
import { isReceiptId } from '../core/receipt.ts';
import { createReceiptFileWriter } from '../io/receipt-file-writer.ts';

/** At most this many files wait for the writer; a probe that would pass it waits until the writer caught up. */
const MAX_UNWRITTEN = 2000;

/** Batched receipt files for one folder. */
export type ReceiptBatches = {
  /** Queues `<dir>/<id>.json` with `json` (the signed text) as its content; waits only when the writer lags. */
  add(id: string, json: string): Promise<void>;
  /**
   * Resolves once every queued file is written, then stops the writer thread. Rejects when a file is missing (the
   * writer thread only logs a failed write): the run must not be published without it, and a resume writes it.
   */
  close(): Promise<void>;
};

/**
 * Starts the batched writer of `dir`.
 * @example const files = createReceiptBatches(receiptsDir); await files.add(record.receipt.id, record.json)
 */
export function createReceiptBatches(dir: string): ReceiptBatches {
  const writer = createReceiptFileWriter(dir);
  let batch: Array<readonly [string, string]> = [];
  let unwritten = 0;
  const added = new Set<string>();
  const send = () => {
    const sending = batch;
    batch = [];
    writer.write(sending);
  };
  return {
    async add(id, json) {
      // Checked here, where the caller can see it, not later in a timer (the id becomes a file name).
      if (!isReceiptId(id)) throw new TypeError(`receipt files: ${JSON.stringify(id)} is not a receipt id`);
      added.add(id);
      if (batch.length === 0) setImmediate(send);
      batch.push([id, `${json}\n`]);
      if (++unwritten < MAX_UNWRITTEN) return;
      unwritten = 0;
      send();
      await writer.settle();
    },
    async close() {
      if (batch.length > 0) send();
      await writer.close();
      if (added.size === 0) return;
      const entries = await readdir(dir, { withFileTypes: true });
      const present = new Set(entries.filter((entry) => entry.isFile()).map((entry) => entry.name));
      const missing = [...added].filter((id) => !present.has(`${id}.json`));
      if (missing.length > 0)
        throw new Error(`${missing.length} receipt files were not written in ${dir} (first: ${missing[0]})`);
    },
  };
}
