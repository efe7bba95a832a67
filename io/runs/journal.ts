/**
 * The journal of an unfinished crawl run: one JSON line per finished probe (its signed receipt and index row),
 * appended in group commits and fsynced before `append` resolves. After a SIGKILL the file ends, at worst, in a
 * torn line; {@link readRunJournal} drops it and truncates the file to the last whole line, so `--resume`
 * probes again exactly what was not durably recorded.
 */
import { type FileHandle, open, truncate } from 'node:fs/promises';

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
 * on a clean line. A bad line before the last is corruption, not a crash, and throws. Holds every record: a caller
 * that keeps less (a crawl's `--resume`) reads with {@link visitRunJournal} instead.
 * @example const records = await readRunJournal(join(workDir, 'probes.ndjson'))
 */
export async function readRunJournal(path: string): Promise<unknown[]> {
  const records: unknown[] = [];
  await visitRunJournal(path, (record) => {
    records.push(record);
  });
  return records;
}

/**
 * {@link readRunJournal} one record at a time, read as a stream: memory holds one chunk of the file and the record
 * visited, not the whole journal (at 50,000 probes a crawl's journal holds every signed receipt). `visit` is awaited
 * before the next record. A bad line is judged once what follows it is known: a whole line after it means corruption
 * (throws), only a torn tail or nothing means a crash, and the file is cut there.
 */
export async function visitRunJournal(
  path: string,
  visit: (record: unknown) => void | Promise<void>,
): Promise<void> {
  let stream: ReturnType<FileHandle['createReadStream']>;
  try {
    const handle = await open(path, 'r');
    stream = handle.createReadStream();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return;
    throw error;
  }
  // Bytes of the whole good lines so far, and where the first bad line began (null: none yet).
  let good = 0;
  let badAt: number | null = null;
  let rest: Buffer = Buffer.alloc(0);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      for (let end = data.indexOf(0x0a); end !== -1; end = data.indexOf(0x0a)) {
        const line = data.subarray(0, end);
        data = data.subarray(end + 1);
        if (badAt !== null) throw new Error(`${path}: a damaged line before the end (byte ${badAt})`);
        let record: unknown;
        try {
          record = JSON.parse(line.toString('utf8'));
        } catch {
          badAt = good;
          continue;
        }
        good += line.length + 1;
        await visit(record);
      }
      rest = Buffer.from(data);
    }
  } finally {
    stream.destroy();
  }
  if (badAt !== null || rest.length > 0) await truncate(path, badAt ?? good);
}
