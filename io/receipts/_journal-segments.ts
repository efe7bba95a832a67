/**
 * The segment files of the journal (io/receipts/journal.ts): their names, listing them in seq order, and reading their
 * lines back. Reading is where a torn last line (a batch never acknowledged) is told apart from real corruption.
 */
import { createReadStream } from 'node:fs';
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a record sits; `cursor` is what `replay({ since })` resumes after. */
export type JournalPosition = { seq: number; segment: string; cursor: string };

const SEGMENT_PATTERN = /^journal-(\d{8})-(\d{12})\.jsonl$/;
const NEWLINE = 0x0a;

/** A segment as listed, and how far it may be read: `limit` bytes, or the whole file when null. */
export type SegmentFile = { name: string; day: string; firstSeq: number; limit: number | null };

/** The file name of the segment that starts at `firstSeq` on `day` (`YYYYMMDD`, UTC); it sorts by seq. */
export function segmentName(day: string, firstSeq: number): string {
  return `journal-${day}-${String(firstSeq).padStart(12, '0')}.jsonl`;
}

/** How {@link readSegments} reads. */
export type ReadOptions = {
  /** A cursor (`position.cursor`) to resume after. */
  since?: string | undefined;
  /**
   * Only the records whose line holds these characters are parsed and visited with their value; every other one is
   * visited as `null`, its position read from the line's `{"seq":…,"rec":` prefix. A reader that wants a few
   * records among many (the hosted uses among the receipts) skips the parse of the rest. An unparsed line is checked
   * for its frame only (prefix, seq in order, closing brace), not as JSON: start-up replays parse every line.
   */
  match?: string | undefined;
};

/**
 * Visits the records of `files` in order after the cursor `since`. A bad or out-of-order line throws
 * {@link JournalCorruptError}; an unterminated last line of the last file is skipped only if `tolerateTornTail`.
 */
export async function readSegments(
  dir: string,
  files: SegmentFile[],
  visit: (record: unknown, position: JournalPosition) => void | Promise<void>,
  options: ReadOptions & { tolerateTornTail: boolean },
): Promise<void> {
  const { since, tolerateTornTail } = options;
  if (since !== undefined && !/^\d{1,15}$/.test(since)) throw new TypeError(`journal: bad cursor ${since}`);
  const match = options.match === undefined ? null : Buffer.from(options.match, 'utf8');
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
    // The visit's promise, if it returns one; a visitor that returns none costs no await per line.
    const handleLine = (bytes: Buffer): void | Promise<void> => {
      lineNo++;
      const parsed =
        match === null || bytes.includes(match) ? parseLine(bytes.toString('utf8')) : skipLine(bytes);
      if (parsed === null || parsed.seq <= previousSeq) throw new JournalCorruptError(file.name, lineNo);
      previousSeq = parsed.seq;
      if (parsed.seq > after)
        return visit(parsed.rec, { seq: parsed.seq, segment: file.name, cursor: String(parsed.seq) });
    };
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      let start = 0;
      let nl = data.indexOf(NEWLINE);
      while (nl !== -1) {
        const visited = handleLine(data.subarray(start, nl));
        if (visited) await visited;
        start = nl + 1;
        nl = data.indexOf(NEWLINE, start);
      }
      rest = Buffer.from(data.subarray(start));
    }
    const isLast = index === files.length - 1;
    if (rest.length > 0 && !(tolerateTornTail && isLast))
      throw new JournalCorruptError(file.name, lineNo + 1);
  }
}

/** The line of one record, `{"seq":…,"rec":<body>}`: what the appender writes and {@link skipLine} reads back. */
export function recordLine(seq: number, body: string): string {
  return `{"seq":${seq},"rec":${body}}\n`;
}

const PREFIX = Buffer.from('{"seq":', 'utf8');
const REC = Buffer.from(',"rec":', 'utf8');
const CLOSE = 0x7d; // '}'

/** A line left unparsed (`match`): its seq from the prefix the appender writes, its record `null`. */
function skipLine(bytes: Buffer): { seq: number; rec: null } | null {
  if (bytes.length < PREFIX.length + 1 || !bytes.subarray(0, PREFIX.length).equals(PREFIX)) return null;
  if (bytes[bytes.length - 1] !== CLOSE) return null;
  let end = PREFIX.length;
  while (end < bytes.length && end - PREFIX.length < 16 && bytes[end]! >= 0x30 && bytes[end]! <= 0x39) end++;
  const digits = bytes.subarray(PREFIX.length, end).toString('latin1');
  // JSON numbers have no leading zero; the appender writes seq as JSON does.
  if (digits === '' || digits.startsWith('0')) return null;
  if (!bytes.subarray(end, end + REC.length).equals(REC)) return null;
  const seq = Number(digits);
  return Number.isSafeInteger(seq) ? { seq, rec: null } : null;
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
export async function tailOf(
  path: string,
): Promise<{ size: number; tornBytes: number; lastSeq: number | null }> {
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

/** The segments in `dir`, in seq order (the order their records were written). */
export async function listSegments(dir: string): Promise<Omit<SegmentFile, 'limit'>[]> {
  const names = await readdir(dir);
  const out: Omit<SegmentFile, 'limit'>[] = [];
  for (const name of names) {
    const m = SEGMENT_PATTERN.exec(name);
    if (m?.[1] !== undefined && m[2] !== undefined) out.push({ name, day: m[1], firstSeq: Number(m[2]) });
  }
  return out.sort((a, b) => a.firstSeq - b.firstSeq || a.day.localeCompare(b.day));
}

/** Cuts a segment to `size` bytes and fdatasyncs it, so a torn tail cut off on open stays cut off. */
export async function truncateDurably(path: string, size: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.truncate(size);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** The UTC day of `date` as `YYYYMMDD`, the day part of a segment name. */
export function segmentDay(date: Date): string {
  return date.toISOString().slice(0, 10).replaceAll('-', '');
}

/** A journal line that is not a valid record, or out of order: real corruption, not a torn write. */
export class JournalCorruptError extends Error {
  override name = 'Journal.CorruptError';
  constructor(segment: string, line: number) {
    super(`journal: corrupt record in ${segment}${line > 0 ? ` at line ${line}` : ' (last line)'}`);
  }
}
