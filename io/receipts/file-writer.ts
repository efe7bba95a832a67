/**
 * Receipt files (`<dir>/<id>.json`) of the live service and of a crawl run, written off the event loop that answers
 * checks or probes: the files queued in one turn of the event loop go to a worker thread as one batch, after that
 * turn's answers, and the thread writes each to a temp name then renames it (a reader never sees half a file), with
 * synchronous calls. No fsync: the journal is the durable copy, and the ledger (or a crawl's resume) writes missing
 * files again from it. The event loop spends one message per batch instead of five thread-pool round trips per
 * file, and the thread pool stays free for the journal's write and fdatasync.
 */
import { Worker } from 'node:worker_threads';
import { isReceiptId } from '../../core/receipt.ts';

/** Writes receipt files in the background. */
export type ReceiptFileWriter = {
  /**
   * Queues one file (`text` is its whole content) and resolves once it is written or its failure logged; every file
   * of one turn of the event loop shares that promise. An id that is not a receipt id is refused (it becomes a name).
   */
  write(id: string, text: string): Promise<void>;
  /** Resolves once every file queued so far is written (or its failure logged). */
  flush(): Promise<void>;
  /** Flushes, then stops the thread (a later `write` starts a new one). */
  close(): Promise<void>;
};

// Plain JavaScript, evaluated by the worker: no loader is needed, so it runs the same under tsx, node and vitest.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { mkdirSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
let n = 0;
const writeOne = (id, text) => {
  const path = join(workerData.dir, id + '.json');
  const tmp = path + '.' + process.pid + '.' + workerData.tag + '.' + n++ + '.tmp';
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (error) {
    try { rmSync(tmp, { force: true }); } catch {}
    throw error;
  }
};
parentPort.on('message', (batch) => {
  const failed = [];
  for (const [id, text] of batch.files) {
    try {
      try {
        writeOne(id, text);
      } catch (error) {
        if (error.code !== 'ENOENT') throw error;
        mkdirSync(workerData.dir, { recursive: true });
        writeOne(id, text);
      }
    } catch (error) {
      failed.push(id + ': ' + String(error && error.message));
    }
  }
  parentPort.postMessage({ seq: batch.seq, failed });
});
`;

/**
 * Starts a writer for `dir`. The thread is started on the first batch and does not keep the process alive.
 * @example const files = createReceiptFileWriter(join(dataDir, 'receipts')); void files.write(receipt.id, text)
 */
export function createReceiptFileWriter(dir: string): ReceiptFileWriter {
  let worker: Worker | null = null;
  let sent = 0;
  let done = 0;
  let waiters: Array<{ seq: number; resolve: () => void }> = [];
  // The files of this turn of the event loop, and the promise they share.
  let queued: Array<readonly [string, string]> = [];
  let written: PromiseWithResolvers<void> | null = null;

  const wake = () => {
    const ready = waiters.filter((waiter) => waiter.seq <= done);
    waiters = waiters.filter((waiter) => waiter.seq > done);
    for (const waiter of ready) waiter.resolve();
  };
  const start = (): Worker => {
    const tag = Math.random().toString(36).slice(2);
    const thread = new Worker(WORKER_SOURCE, { eval: true, workerData: { dir, tag } });
    thread.unref();
    thread.on('message', (message: { seq: number; failed: string[] }) => {
      for (const failure of message.failed)
        console.error('[spotcheck] [ledger] receipt file not written', failure);
      done = Math.max(done, message.seq);
      wake();
    });
    thread.on('error', (error) => console.error('[spotcheck] [ledger] receipt file writer failed', error));
    // A thread that died takes its queued batches with it: they are counted as done (logged above) so nothing
    // waits forever; the files come back from the journal at the next start.
    thread.on('exit', () => {
      if (worker !== thread) return;
      worker = null;
      done = sent;
      wake();
    });
    return thread;
  };

  const send = () => {
    if (written === null) return;
    const files = queued;
    const { resolve } = written;
    queued = [];
    written = null;
    worker ??= start();
    sent++;
    waiters.push({ seq: sent, resolve });
    worker.postMessage({ seq: sent, files });
  };
  const flush = (): Promise<void> => {
    send();
    return done >= sent ? Promise.resolve() : new Promise((resolve) => waiters.push({ seq: sent, resolve }));
  };

  return {
    write(id, text) {
      if (!isReceiptId(id)) throw new TypeError(`receipt files: ${JSON.stringify(id)} is not a receipt id`);
      if (written === null) {
        written = Promise.withResolvers<void>();
        setImmediate(send);
      }
      queued.push([id, text]);
      return written.promise;
    },
    flush,
    async close() {
      await flush();
      const thread = worker;
      worker = null;
      await thread?.terminate();
    },
  };
}
