/**
 * The appending side of an open journal (io/journal.ts): group commit and segment rollover. Appends that arrive
 * while a batch is on its way to disk queue for the next batch, which is one `write` and one `fdatasync`; a
 * record's promise resolves only after its batch is durable (design.md promise 2).
 */
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { recordLine, segmentName, utcDay } from './_journal-segments.ts';
import { syncDir } from './durable-file.ts';
import type { JournalPosition, JournalStats } from './journal.ts';

type Pending = {
  line: string;
  position: JournalPosition;
  resolve: (p: JournalPosition) => void;
  reject: (e: unknown) => void;
};

/** The segment appended to; `bytes` counts only what is durable, so replay may read it up to there. */
export type Active = {
  name: string;
  day: string;
  handle: Awaited<ReturnType<typeof open>> | null;
  bytes: number;
};

/** The options of `createJournal`, defaults filled in. */
export type Settings = { maxBatch: number; fsync: boolean; maxSegmentBytes: number; now: () => Date };

/** The appender of one open journal; `createJournal` wraps it and owns the lock. */
export type Appender = {
  /** Queues one line `{"seq":…,"rec":<body>}`; resolves once its batch is written and fdatasync'd. */
  enqueue(body: string): Promise<JournalPosition>;
  /** The segment being appended to, for replay to stop at its last durable byte. */
  active(): Active | null;
  stats(): JournalStats;
  /** Flushes what is queued, then closes the segment; later appends reject. False if already closed. */
  close(): Promise<boolean>;
};

const MAX_BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Starts appending in `dir` after what was recovered on open: the next seq and the last segment, if any.
 * @example const appender = createAppender(dir, settings, { nextSeq, active, segments: segments.length })
 */
export function createAppender(
  dir: string,
  settings: Settings,
  start: { nextSeq: number; active: Active | null; segments: number },
): Appender {
  const { maxBatch, fsync, maxSegmentBytes, now } = settings;
  let nextSeq = start.nextSeq;
  let active = start.active;

  const stats: JournalStats = { appended: 0, batches: 0, syncs: 0, segments: start.segments };
  let queue: Pending[] = [];
  let writing: Promise<void> | null = null;
  let failure: unknown = null;
  let closed = false;

  async function segmentFor(firstSeq: number, incoming: number): Promise<Active> {
    const day = utcDay(now());
    if (
      active !== null &&
      active.day === day &&
      (active.bytes === 0 || active.bytes + incoming <= maxSegmentBytes)
    ) {
      active.handle ??= await open(join(dir, active.name), 'a');
      return active;
    }
    await active?.handle?.close();
    // An empty segment (opened on an earlier day, never written) would share its first seq with the new one.
    if (active !== null && active.bytes === 0) await rm(join(dir, active.name), { force: true });
    const name = segmentName(day, firstSeq);
    const handle = await open(join(dir, name), 'a');
    // The new file's directory entry must be durable too, or an fdatasync'd batch could vanish with it.
    await syncDir(dir);
    stats.segments++;
    active = { name, day, handle, bytes: 0 };
    return active;
  }

  async function writeBatch(batch: Pending[]): Promise<void> {
    const data = Buffer.from(batch.map((p) => p.line).join(''), 'utf8');
    const first = batch[0];
    if (first === undefined) return;
    const segment = await segmentFor(first.position.seq, data.length);
    for (const p of batch) p.position.segment = segment.name;
    const handle = segment.handle;
    if (handle === null) throw new Error('journal: segment not open');
    let offset = 0;
    while (offset < data.length) {
      const { bytesWritten } = await handle.write(data, offset, data.length - offset);
      offset += bytesWritten;
    }
    if (fsync) {
      await handle.datasync();
      stats.syncs++;
    }
    // Counted only once durable: replay reads the active segment up to here.
    segment.bytes += data.length;
    stats.batches++;
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = takeBatch(queue, maxBatch);
      queue = queue.slice(batch.length);
      try {
        await writeBatch(batch);
      } catch (error) {
        // The file may now end in a partial batch; stop accepting writes (fail closed) rather than append
        // after it. Reopening the journal cuts the torn tail off.
        failure = error;
        for (const p of [...batch, ...queue]) p.reject(error);
        queue = [];
        return;
      }
      stats.appended += batch.length;
      for (const p of batch) p.resolve(p.position);
    }
  }

  function enqueue(body: string): Promise<JournalPosition> {
    if (closed) return Promise.reject(new Error('journal: closed'));
    if (failure !== null)
      return Promise.reject(new Error('journal: stopped after a write error', { cause: failure }));
    if (typeof body !== 'string' || !body.startsWith('{') || !body.endsWith('}')) {
      return Promise.reject(new TypeError('journal: a record must serialize to a JSON object'));
    }
    const seq = nextSeq++;
    const position: JournalPosition = { seq, segment: '', cursor: String(seq) };
    return new Promise<JournalPosition>((resolve, reject) => {
      queue.push({ line: recordLine(seq, body), position, resolve, reject });
      kick();
    });
  }

  function kick(): void {
    if (writing !== null) return;
    writing = drain().finally(() => {
      writing = null;
      if (queue.length > 0 && failure === null) kick();
    });
  }

  return {
    enqueue,
    active: () => active,
    stats: () => ({ ...stats }),
    async close() {
      if (closed) return false;
      closed = true;
      while (writing !== null) await writing;
      await active?.handle?.close();
      return true;
    },
  };
}

function takeBatch(queue: Pending[], maxBatch: number): Pending[] {
  let bytes = 0;
  let n = 0;
  while (n < queue.length && n < maxBatch) {
    const line = queue[n]?.line ?? '';
    if (n > 0 && bytes + line.length > MAX_BATCH_BYTES) break;
    bytes += line.length;
    n++;
  }
  return queue.slice(0, n);
}
