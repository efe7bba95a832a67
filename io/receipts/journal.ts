/**
 * The durable, append-only journal of receipts (docs/architecture.md "Durability promises", promises 2 and 3).
 *
 * A record is acknowledged (its `append` resolves) only after the batch holding it was written and
 * fdatasync'd. Appends that arrive while a batch is on its way to disk are queued and written together in
 * the next batch: one `write` of the concatenated lines and one `fdatasync` (group commit), so the number of
 * syncs grows with time, not with concurrency.
 *
 * On disk: `<dir>/journal-YYYYMMDD-<first seq, 12 digits>.jsonl`, one line per record,
 * `{"seq":<n>,"rec":<record>}`. `seq` is monotonic across segments and restarts; segments roll over at the
 * UTC day boundary and past 64 MiB. After a SIGKILL the only possible damage is an unterminated last line
 * (a batch that was never acknowledged); it is cut off when the journal is opened.
 *
 * This module opens, recovers and reads; group commit and rollover are in _journal-append.ts, segment names and
 * line reading in _journal-segments.ts, and the one-writer lock in _journal-lock.ts.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Active, createAppender, type JournalStats, type Settings } from './_journal-append.ts';
import { acquireLock } from './_journal-lock.ts';
import {
  type JournalPosition,
  listSegments,
  type ReadOptions,
  readSegments,
  type SegmentFile,
  tailOf,
  truncateDurably,
} from './_journal-segments.ts';

/** Options of {@link createJournal}. */
export type JournalOptions = {
  dir: string;
  /** Most records written by one batch (default 1024). */
  maxBatch?: number;
  /** fdatasync each batch (default true). Turn off only in tests or benchmarks that say so. */
  fsync?: boolean;
  /** Roll over to a new segment past this many bytes (default 64 MiB). */
  maxSegmentBytes?: number;
  /** Clock for the day in segment names (default `new Date()`). */
  now?: () => Date;
};

/** An open journal; one writer process per directory (enforced with a lock file). */
export type Journal = {
  /** Resolves once the record is durably on disk, with its position. */
  append(record: object): Promise<JournalPosition>;
  /**
   * {@link Journal.append} of a record the caller already serialized (`JSON.stringify` of a plain object, or any
   * JSON object text without a raw line break), so a record is serialized once for the journal and its other uses.
   */
  appendJson(text: string): Promise<JournalPosition>;
  /**
   * Visits acknowledged records in order; `since` is a `position.cursor` to resume after, and with `match` only the
   * records whose line holds it are parsed (the others are visited as `null`).
   */
  replay(
    visit: (record: unknown, position: JournalPosition) => void | Promise<void>,
    options?: ReadOptions,
  ): Promise<void>;
  /**
   * The cursor just before the first record written on `day` (`YYYYMMDD`, UTC) or later: `replay({ since })`
   * from it visits that day's records and skips whole earlier segments. Null when nothing was written since.
   */
  cursorBeforeDay(day: string): Promise<string | null>;
  stats(): JournalStats;
  /** Flushes what is queued, then closes; later appends reject. */
  close(): Promise<void>;
};

const DEFAULT_MAX_SEGMENT = 64 * 1024 * 1024;

/**
 * Opens (or creates) the journal in `dir`, cutting off a torn last line left by a crash.
 * @example const journal = await createJournal({ dir: join(dataDir, 'journal') }); await journal.append(receipt)
 */
export async function createJournal(options: JournalOptions): Promise<Journal> {
  const { dir } = options;
  const maxBatch = options.maxBatch ?? 1024;
  const fsync = options.fsync ?? true;
  const maxSegmentBytes = options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT;
  const now = options.now ?? (() => new Date());
  await mkdir(dir, { recursive: true });
  const releaseLock = await acquireLock(dir);
  try {
    return await openLocked(dir, { maxBatch, fsync, maxSegmentBytes, now }, releaseLock);
  } catch (error) {
    await releaseLock();
    throw error;
  }
}

async function openLocked(
  dir: string,
  settings: Settings,
  releaseLock: () => Promise<void>,
): Promise<Journal> {
  const segments = await listSegments(dir);
  let nextSeq = 1;
  let active: Active | null = null;
  const last = segments.at(-1);
  if (last !== undefined) {
    const tail = await tailOf(join(dir, last.name));
    if (tail.tornBytes > 0) await truncateDurably(join(dir, last.name), tail.size - tail.tornBytes);
    nextSeq = tail.lastSeq === null ? last.firstSeq : tail.lastSeq + 1;
    active = { name: last.name, day: last.day, handle: null, bytes: tail.size - tail.tornBytes };
  }
  const appender = createAppender(dir, settings, { nextSeq, active, segments: segments.length });

  return {
    append(record) {
      let body: string;
      try {
        body = JSON.stringify(record);
      } catch (error) {
        return Promise.reject(error);
      }
      return appender.enqueue(body);
    },
    appendJson(text) {
      // A raw line break would split the record in two lines: the journal's one framing rule.
      if (text.includes('\n')) return Promise.reject(new TypeError('journal: a record must be one line'));
      return appender.enqueue(text);
    },
    async replay(visit, replayOptions = {}) {
      // Only what is acknowledged: the active segment is read up to its last fdatasync'd byte.
      const listed = await listSegments(dir);
      const current = appender.active();
      const files: SegmentFile[] = listed.map((s) => ({
        ...s,
        limit: s.name === current?.name ? current.bytes : null,
      }));
      await readSegments(dir, files, visit, { ...replayOptions, tolerateTornTail: false });
    },
    async cursorBeforeDay(day) {
      // Segments roll over at the UTC day boundary, so a day's records all sit in segments named for it or later.
      const first = (await listSegments(dir)).find((segment) => segment.day >= day);
      return first === undefined ? null : String(first.firstSeq - 1);
    },
    stats: () => appender.stats(),
    async close() {
      if (await appender.close()) await releaseLock();
    },
  };
}

/**
 * Reads a journal directory without opening it for writing (no lock, nothing truncated), e.g. a finished
 * crawl run's journal. An unterminated last line is skipped: it was never acknowledged.
 * @example await readJournal(runDir, (record) => { rows.push(record) })
 */
export async function readJournal(
  dir: string,
  visit: (record: unknown, position: JournalPosition) => void | Promise<void>,
  options: ReadOptions = {},
): Promise<void> {
  const files = (await listSegments(dir)).map((s) => ({ ...s, limit: null }));
  await readSegments(dir, files, visit, { ...options, tolerateTornTail: true });
}

export type { JournalStats } from './_journal-append.ts';
/** Where a record sits (it sits with the segment reader, which resumes from its `cursor`) and the appender's counters. */
/** What `replay` and `readJournal` take besides the visitor; it sits with the segment reader. */
export type { JournalPosition, ReadOptions } from './_journal-segments.ts';
/** Thrown by replay and on open for a line that is real corruption; it sits with the segment reader. */
export { JournalCorruptError } from './_journal-segments.ts';
