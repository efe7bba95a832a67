/**
 * The receipt files of a crawl run, written off the event loop by the live service's writer
 * (`io/receipts/file-writer.ts`, which sends the files of one turn of the event loop to its thread as one batch),
 * with a bound on how far the files may trail the probes and a check, before publication, that every one is there.
 * Not fsynced: the run's journal is the durable copy, and a resume writes the files of every recorded probe again.
 */
import { readdir } from 'node:fs/promises';
import { createReceiptFileWriter } from '../io/receipts/file-writer.ts';

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
  let unwritten = 0;
  const added = new Set<string>();
  return {
    async add(id, json) {
      // The writer refuses an id that is not a receipt id at once (it becomes a file name).
      void writer.write(id, `${json}\n`);
      added.add(id);
      if (++unwritten < MAX_UNWRITTEN) return;
      unwritten = 0;
      await writer.flush();
    },
    async close() {
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
