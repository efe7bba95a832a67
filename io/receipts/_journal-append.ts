/**
 * The appending side of an open journal (io/receipts/journal.ts): group commit and segment rollover. Appends that arrive
 * while a batch is on its way to disk queue for the next batch, which is one `write` and one `fdatasync`; a
 * record's promise resolves only after its batch is durable (docs/architecture.md "Durability promises" 2).
 */
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from '../durable-file.ts';
import type { JournalPosition } from './_journal-segments.ts';
import { recordLine, segmentDay, segmentName } from './_journal-segments.ts';

/** Counters that show group commit at work. */
export type JournalStats = { appended: number; batches: number; syncs: number; segments: number };

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
  const state: AppenderState = {
    dir,
    settings,
    nextSeq: start.nextSeq,
    active: start.active,
    stats: { appended: 0, batches: 0, syncs: 0, segments: start.segments },
    queue: [],
    writing: null,
    failure: null,
    closed: false,
  };
  return {
    enqueue: (body) => enqueue(state, body),
    active: () => state.active,
    stats: () => ({ ...state.stats }),
    async close() {
      if (state.closed) return false;
      state.closed = true;
      while (state.writing !== null) await state.writing;
      await state.active?.handle?.close();
      return true;
    },
  };
}

/** The state of one appender, shared by its steps. */
type AppenderState = {
  readonly dir: string;
  readonly settings: Settings;
  nextSeq: number;
  active: Active | null;
  readonly stats: JournalStats;
  queue: Pending[];
  /** The drain running, if any. */
  writing: Promise<void> | null;
  /** The write error that stopped the journal, if one did. */
  failure: unknown;
  closed: boolean;
};

function enqueue(state: AppenderState, body: string): Promise<JournalPosition> {
  if (state.closed) return Promise.reject(new Error('journal: closed'));
  if (state.failure !== null)
    return Promise.reject(new Error('journal: stopped after a write error', { cause: state.failure }));
  if (typeof body !== 'string' || !body.startsWith('{') || !body.endsWith('}')) {
    return Promise.reject(new TypeError('journal: a record must serialize to a JSON object'));
  }
  const seq = state.nextSeq++;
  const position: JournalPosition = { seq, segment: '', cursor: String(seq) };
  return new Promise<JournalPosition>((resolve, reject) => {
    state.queue.push({ line: recordLine(seq, body), position, resolve, reject });
    kick(state);
  });
}

/** Starts a drain unless one runs; a drain that ends with lines queued starts the next. */
function kick(state: AppenderState): void {
  if (state.writing !== null) return;
  state.writing = drain(state).finally(() => {
    state.writing = null;
    if (state.queue.length > 0 && state.failure === null) kick(state);
  });
}

/** Writes batches until the queue is empty, resolving each record once its batch is durable. */
async function drain(state: AppenderState): Promise<void> {
  while (state.queue.length > 0) {
    const batch = takeBatch(state.queue, state.settings.maxBatch);
    state.queue = state.queue.slice(batch.length);
    try {
      await writeBatch(state, batch);
    } catch (error) {
      // The file may now end in a partial batch; stop accepting writes (fail closed) rather than append
      // after it. Reopening the journal cuts the torn tail off.
      state.failure = error;
      for (const p of [...batch, ...state.queue]) p.reject(error);
      state.queue = [];
      return;
    }
    state.stats.appended += batch.length;
    for (const p of batch) p.resolve(p.position);
  }
}

/** One `write` and one `fdatasync` of a batch, into the segment it belongs to. */
async function writeBatch(state: AppenderState, batch: Pending[]): Promise<void> {
  const data = Buffer.from(batch.map((p) => p.line).join(''), 'utf8');
  const first = batch[0];
  if (first === undefined) return;
  const segment = await segmentFor(state, first.position.seq, data.length);
  for (const p of batch) p.position.segment = segment.name;
  const handle = segment.handle;
  if (handle === null) throw new Error('journal: segment not open');
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    offset += bytesWritten;
  }
  if (state.settings.fsync) {
    await handle.datasync();
    state.stats.syncs++;
  }
  // Counted only once durable: replay reads the active segment up to here.
  segment.bytes += data.length;
  state.stats.batches++;
}

/** The segment a batch goes to: the active one, or a new one on a new day or past the size cap. */
async function segmentFor(state: AppenderState, firstSeq: number, incoming: number): Promise<Active> {
  const { dir } = state;
  const day = segmentDay(state.settings.now());
  const active = state.active;
  if (
    active !== null &&
    active.day === day &&
    (active.bytes === 0 || active.bytes + incoming <= state.settings.maxSegmentBytes)
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
  state.stats.segments++;
  state.active = { name, day, handle, bytes: 0 };
  return state.active;
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
