/**
 * The server's inbox: how other processes hand data to the only process that may write the database (DuckDB is
 * single-writer, docs/architecture.md). A producer creates `<inbox>/<name>-<random>.tmp` exclusively, links it to `<name>-<random>.json`
 * (atomic, never replacing a file), and the server ingests it and moves it to `done/` (or `failed/` with a
 * `.error` note).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

export type InboxHandler = (name: string, content: string) => Promise<string>;

/**
 * Publishes a file into the inbox atomically, under `<name>-<random>` so that two producers naming their files
 * alike (two operator commands in the same millisecond) never share one: the temporary file is created exclusively
 * and the final name is taken with `link`, which fails rather than replace a file already there. Returns the final
 * path; its base name, without `.json`, is what the server's answer is filed under.
 */
export async function publishToInbox(inbox: string, name: string, content: string): Promise<string> {
  await mkdir(inbox, { recursive: true });
  for (;;) {
    const unique = `${name}-${randomBytes(6).toString('hex')}`;
    const tmp = join(inbox, `${unique}.tmp`);
    const final = join(inbox, `${unique}.json`);
    try {
      await writeFile(tmp, content, { flag: 'wx' });
    } catch (error) {
      if (isExists(error)) continue;
      throw error;
    }
    try {
      await link(tmp, final);
    } catch (error) {
      await unlink(tmp);
      if (isExists(error)) continue;
      throw error;
    }
    await unlink(tmp);
    return final;
  }
}

function isExists(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'EEXIST';
}

/** What became of a file handed over: the server's note, its refusal, or still waiting when the wait ran out. */
export type HandOver =
  | { status: 'done'; note: string }
  | { status: 'failed'; note: string }
  | { status: 'waiting'; path: string };

/** Publishes a file and waits up to `timeoutMs` for the server's note (done) or error (failed). */
export async function handOver(
  inbox: string,
  name: string,
  content: string,
  timeoutMs = 15_000,
): Promise<HandOver> {
  const path = await publishToInbox(inbox, name, content);
  const published = basename(path);
  const done = join(inbox, 'done', `${published}.result`);
  const failed = join(inbox, 'failed', `${published}.error`);
  for (let waited = 0; waited <= timeoutMs; waited += 100) {
    if (existsSync(done)) return { status: 'done', note: (await readFile(done, 'utf8')).trim() };
    if (existsSync(failed)) return { status: 'failed', note: (await readFile(failed, 'utf8')).trim() };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { status: 'waiting', path };
}

/** Ingests what is waiting, then polls every `intervalMs` until stopped. */
export function watchInbox(
  inbox: string,
  handle: InboxHandler,
  intervalMs = 1000,
): { stop(): void; drain(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const drain = () => {
    running = running
      .then(() => ingest(inbox, handle))
      .catch((error: unknown) => {
        console.error('[spotcheck] [inbox] ingest failed', error);
      });
    return running;
  };
  const timer = setInterval(drain, intervalMs);
  timer.unref();
  void drain();
  return {
    // Waits for an ingest in flight, so nothing writes into DATA_DIR after the service closed.
    async stop() {
      clearInterval(timer);
      await running;
    },
    drain,
  };
}

async function ingest(inbox: string, handle: InboxHandler): Promise<void> {
  await mkdir(join(inbox, 'done'), { recursive: true });
  await mkdir(join(inbox, 'failed'), { recursive: true });
  const names = (await readdir(inbox)).filter((name) => name.endsWith('.json')).sort();
  for (const name of names) {
    const path = join(inbox, name);
    try {
      const note = await handle(name, await readFile(path, 'utf8'));
      await rename(path, join(inbox, 'done', name));
      await writeFile(join(inbox, 'done', `${name}.result`), `${note}\n`);
    } catch (error) {
      await rename(path, join(inbox, 'failed', name));
      await writeFile(join(inbox, 'failed', `${name}.error`), `${(error as Error).message}\n`);
    }
  }
}
