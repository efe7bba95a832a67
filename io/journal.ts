/**
 * The durable, append-only journal of receipts (design.md "Processes and who owns state", promises 2 and 3).
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
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isProcessAlive } from './process-alive.ts';

/** Where a record sits; `cursor` is what `replay({ since })` resumes after. */
export type JournalPosition = { seq: number; segment: string; cursor: string };

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

/** Counters that show group commit at work. */
export type JournalStats = { appended: number; batches: number; syncs: number; segments: number };

/** An open journal; one writer process per directory (enforced with a lock file). */
export type Journal = {
  /** Resolves once the record is durably on disk, with its position. */
  append(record: object): Promise<JournalPosition>;
  /**
   * {@link Journal.append} of a record the caller already serialized (`JSON.stringify` of a plain object, or any
   * JSON object text without a raw line break), so a record is serialized once for the journal and its other uses.
   */
  appendJson(text: string): Promise<JournalPosition>;
  /** Visits acknowledged records in order; `since` is a `position.cursor` to resume after. */
  replay(
    visit: (record: unknown, position: JournalPosition) => void | Promise<void>,
    options?: { since?: string },
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

type Pending = {
  line: string;
  position: JournalPosition;
  resolve: (p: JournalPosition) => void;
  reject: (e: unknown) => void;
};
type Active = { name: string; day: string; handle: Awaited<ReturnType<typeof open>> | null; bytes: number };

const DEFAULT_MAX_SEGMENT = 64 * 1024 * 1024;
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

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

type Settings = { maxBatch: number; fsync: boolean; maxSegmentBytes: number; now: () => Date };

async function openLocked(
  dir: string,
  settings: Settings,
  releaseLock: () => Promise<void>,
): Promise<Journal> {
  const { maxBatch, fsync, maxSegmentBytes, now } = settings;

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

  const stats: JournalStats = { appended: 0, batches: 0, syncs: 0, segments: segments.length };
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
    await syncPath(dir);
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
      queue.push({ line: `{"seq":${seq},"rec":${body}}\n`, position, resolve, reject });
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
    append(record) {
      let body: string;
      try {
        body = JSON.stringify(record);
      } catch (error) {
        return Promise.reject(error);
      }
      return enqueue(body);
    },
    appendJson(text) {
      // A raw line break would split the record in two lines: the journal's one framing rule.
      if (text.includes('\n')) return Promise.reject(new TypeError('journal: a record must be one line'));
      return enqueue(text);
    },
    async replay(visit, replayOptions = {}) {
      // Only what is acknowledged: the active segment is read up to its last fdatasync'd byte.
      const files: SegmentFile[] = (await listSegments(dir)).map((s) => ({
        ...s,
        limit: s.name === active?.name ? active.bytes : null,
      }));
      await readSegments(dir, files, visit, replayOptions.since, false);
    },
    async cursorBeforeDay(day) {
      // Segments roll over at the UTC day boundary, so a day's records all sit in segments named for it or later.
      const first = (await listSegments(dir)).find((segment) => segment.day >= day);
      return first === undefined ? null : String(first.firstSeq - 1);
    },
    stats: () => ({ ...stats }),
    async close() {
      if (closed) return;
      closed = true;
      while (writing !== null) await writing;
      await active?.handle?.close();
      await releaseLock();
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

/**
 * Reads a journal directory without opening it for writing (no lock, nothing truncated), e.g. a finished
 * crawl run's journal. An unterminated last line is skipped: it was never acknowledged.
 * @example await readJournal(runDir, (record) => { rows.push(record) })
 */
export async function readJournal(
  dir: string,
  visit: (record: unknown, position: JournalPosition) => void | Promise<void>,
  options: { since?: string } = {},
): Promise<void> {
  const files = (await listSegments(dir)).map((s) => ({ ...s, limit: null }));
  await readSegments(dir, files, visit, options.since, true);
}

const SEGMENT_PATTERN = /^journal-(\d{8})-(\d{12})\.jsonl$/;
const NEWLINE = 0x0a;

type SegmentFile = { name: string; day: string; firstSeq: number; limit: number | null };

function segmentName(day: string, firstSeq: number): string {
  return `journal-${day}-${String(firstSeq).padStart(12, '0')}.jsonl`;
}

async function readSegments(
  dir: string,
  files: SegmentFile[],
  visit: (record: unknown, position: JournalPosition) => void | Promise<void>,
  since: string | undefined,
  tolerateTornTail: boolean,
): Promise<void> {
  if (since !== undefined && !/^\d{1,15}$/.test(since)) throw new TypeError(`journal: bad cursor ${since}`);
  const after = since === undefined ? 0 : Number(since);
  let previousSeq = 0;
  for (const [index, file] of files.entries()) {
    const next = files[index + 1];
    // Segment names carry their first seq, so whole segments before the cursor are never opened.
    if (next !== undefined && next.firstSeq <= after + 1) continue;
    if (file.limit === 0) continue;
    const stream = createReadStream(join(dir, file.name), file.limit === null ? {} : { end: file.limit - 1 });
    let rest: Buffer = Buffer.alloc(0);
    let lineNo = 0;
    const handleLine = async (bytes: Buffer): Promise<void> => {
      lineNo++;
      const parsed = parseLine(bytes.toString('utf8'));
      if (parsed === null || parsed.seq <= previousSeq) throw new JournalCorruptError(file.name, lineNo);
      previousSeq = parsed.seq;
      if (parsed.seq > after)
        await visit(parsed.rec, { seq: parsed.seq, segment: file.name, cursor: String(parsed.seq) });
    };
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      let nl = data.indexOf(NEWLINE);
      while (nl !== -1) {
        await handleLine(data.subarray(0, nl));
        data = data.subarray(nl + 1);
        nl = data.indexOf(NEWLINE);
      }
      rest = Buffer.from(data);
    }
    const isLast = index === files.length - 1;
    if (rest.length > 0 && !(tolerateTornTail && isLast))
      throw new JournalCorruptError(file.name, lineNo + 1);
  }
}

function parseLine(text: string): { seq: number; rec: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || !('rec' in value) || !('seq' in value)) return null;
    const { seq, rec } = value as { seq: unknown; rec: unknown };
    return Number.isSafeInteger(seq) && (seq as number) > 0 ? { seq: seq as number, rec } : null;
  } catch {
    return null;
  }
}

/** Size of the segment, bytes after its last newline (a torn write), and the seq of its last full line. */
async function tailOf(path: string): Promise<{ size: number; tornBytes: number; lastSeq: number | null }> {
  // Whole-file read: at most one segment (64 MiB), once per start-up.
  const data = await readFile(path);
  const end = data.lastIndexOf(NEWLINE);
  const tornBytes = data.length - (end + 1);
  if (end === -1) return { size: data.length, tornBytes, lastSeq: null };
  const start = data.lastIndexOf(NEWLINE, end - 1) + 1;
  const parsed = parseLine(data.subarray(start, end).toString('utf8'));
  if (parsed === null) throw new JournalCorruptError(path, -1);
  return { size: data.length, tornBytes, lastSeq: parsed.seq };
}

async function listSegments(dir: string): Promise<Omit<SegmentFile, 'limit'>[]> {
  const names = await readdir(dir);
  const out: Omit<SegmentFile, 'limit'>[] = [];
  for (const name of names) {
    const m = SEGMENT_PATTERN.exec(name);
    if (m?.[1] !== undefined && m[2] !== undefined) out.push({ name, day: m[1], firstSeq: Number(m[2]) });
  }
  return out.sort((a, b) => a.firstSeq - b.firstSeq || a.day.localeCompare(b.day));
}

async function truncateDurably(path: string, size: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.truncate(size);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10).replaceAll('-', '');
}

// Directories open for writing in this process (the lock file alone cannot tell us apart from ourselves).
const openDirs = new Set<string>();

/** One writer per directory: a second writer appending to the same segment would interleave batches. */
async function acquireLock(dir: string): Promise<() => Promise<void>> {
  const key = resolve(dir);
  if (openDirs.has(key)) throw new Error(`journal: ${dir} is already open in this process`);
  const path = join(dir, 'LOCK');
  try {
    await writeFile(path, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    const holder = Number((await readFile(path, 'utf8')).trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isProcessAlive(holder)) {
      throw new Error(`journal: ${dir} is locked by running process ${holder}`);
    }
    // A lock left by a killed process: take it over.
    await writeFile(path, String(process.pid));
  }
  openDirs.add(key);
  return async () => {
    openDirs.delete(key);
    await rm(path, { force: true });
  };
}

/** A journal line that is not a valid record, or out of order: real corruption, not a torn write. */
export class JournalCorruptError extends Error {
  override name = 'Journal.CorruptError';
  constructor(segment: string, line: number) {
    super(`journal: corrupt record in ${segment}${line > 0 ? ` at line ${line}` : ' (last line)'}`);
  }
}
