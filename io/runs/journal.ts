/**
 * The journal of an unfinished crawl run: one JSON line per finished probe (its signed receipt and index row),
 * appended in group commits and fsynced before `append` resolves. After a SIGKILL the file ends, at worst, in a
 * torn line; {@link readRunJournal} drops it and truncates the file to the last whole line, so `--resume`
 * probes again exactly what was not durably recorded.
 */
import { open, readFile, truncate } from 'node:fs/promises';

export type RunJournal = {
  /** Appends one record; resolves once it is on disk. */
  append(record: unknown): Promise<void>;
  /** {@link RunJournal.append} for a record already serialized: one JSON text without a line break. */
  appendJson(json: string): Promise<void>;
  close(): Promise<void>;
};

/**
 * Opens (creating) a journal for appending. Records queued while a write is in flight go out together in the next
 * write and share its fsync (group commit).
 * @example const journal = await openRunJournal(join(workDir, 'probes.ndjson'))
 */
export async function openRunJournal(path: string, options: { fsync?: boolean } = {}): Promise<RunJournal> {
  const fsync = options.fsync ?? true;
  const handle = await open(path, 'a');
  let queue: Array<{ line: string; done: () => void; fail: (error: unknown) => void }> = [];
  let writing: Promise<void> | null = null;
  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await handle.appendFile(batch.map((item) => item.line).join(''), 'utf8');
        if (fsync) await handle.datasync();
        for (const item of batch) item.done();
      } catch (error) {
        for (const item of batch) item.fail(error);
      }
    }
    writing = null;
  };
  const appendJson = (json: string) =>
    new Promise<void>((done, fail) => {
      queue.push({ line: `${json}\n`, done, fail });
      writing ??= drain();
    });
  return {
    append: (record) => appendJson(JSON.stringify(record)),
    appendJson,
    async close() {
      while (writing !== null) await writing;
      await handle.close();
    },
  };
}

/**
 * Reads every whole record; a torn last line (no newline, or not JSON) is cut off the file so later appends start
 * on a clean line. A bad line before the last is corruption, not a crash, and throws.
 * @example const records = await readRunJournal(join(workDir, 'probes.ndjson'))
 */
export async function readRunJournal(path: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return [];
    throw error;
  }
  const records: unknown[] = [];
  let offset = 0;
  while (offset < text.length) {
    const end = text.indexOf('\n', offset);
    const line = end === -1 ? null : text.slice(offset, end);
    let parsed: unknown;
    let ok = line !== null;
    if (line !== null) {
      try {
        parsed = JSON.parse(line);
      } catch {
        ok = false;
      }
    }
    if (!ok) {
      if (end !== -1 && text.indexOf('\n', end + 1) !== -1)
        throw new Error(
          `${path}: a damaged line before the end (byte ${Buffer.byteLength(text.slice(0, offset))})`,
        );
      await truncate(path, Buffer.byteLength(text.slice(0, offset)));
      break;
    }
    records.push(parsed);
    offset = (end as number) + 1;
  }
  return records;
}
