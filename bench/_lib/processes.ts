/**
 * Server processes for the benchmarks. The server under test runs in its own Node process (forked with tsx and
 * the `instrument.ts` preload), so the load generator never shares its event loop: `api/main.ts` for the service,
 * `bare-server.ts` for the baseline. Both read HOST/PORT from the environment like `npm start` does.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../sandbox/ports.ts';
import type { ServerStats } from './instrument.ts';

export type { ServerStats } from './instrument.ts';
export { freePort };

/** A running server process. */
export type ServerProcess = {
  url: string;
  pid: number;
  /** Memory, CPU and fsync counters reported by the process itself. */
  stats(): Promise<ServerStats>;
  /** SIGTERM (the server's graceful path), SIGKILL after 15 s; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** The last lines the process printed (shown when something fails). */
  output(): string;
};

/** Server CPU (user + system, all threads) between two of its stats, in ms. */
export function serverCpuMs(after: ServerStats, before: ServerStats): number {
  return after.cpuUserMs + after.cpuSystemMs - before.cpuUserMs - before.cpuSystemMs;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const INSTRUMENT = fileURLToPath(new URL('./instrument.ts', import.meta.url));

/** Options of {@link startServer}. */
export type StartOptions = {
  /** Module to run, relative to the repository root (e.g. `api/main.ts`). */
  module: string;
  env?: Record<string, string>;
  /** Path answered 200 once the server is ready. */
  readyPath: string;
  /** Write a V8 CPU profile of the process into this directory (`--cpu-prof`). */
  cpuProfDir?: string;
};

/** Forks the server, waits until `readyPath` answers 200, and returns a handle. */
export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const port = await freePort();
  const execArgv = ['--import', 'tsx', '--import', INSTRUMENT];
  if (options.cpuProfDir) execArgv.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`);
  const child = fork(join(ROOT, options.module), [], {
    cwd: ROOT,
    execArgv,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 40));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const handle = makeHandle(child, url, exited, lines);
  try {
    await waitReady(`${url}${options.readyPath}`, exited);
  } catch (error) {
    await handle.stop();
    throw new Error(`bench: ${options.module} did not start:\n${lines.join('\n')}`, { cause: error });
  }
  return handle;
}

function makeHandle(
  child: ChildProcess,
  url: string,
  exited: Promise<number | null>,
  lines: string[],
): ServerProcess {
  let nextId = 1;
  let stopping: Promise<number | null> | null = null;
  return {
    url,
    pid: child.pid ?? -1,
    stats() {
      const id = nextId++;
      return new Promise<ServerStats>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('bench: no stats from the server')), 5_000);
        const onMessage = (message: unknown) => {
          const m = message as { type?: unknown; id?: unknown; stats?: ServerStats };
          if (m?.type !== 'stats' || m.id !== id || !m.stats) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(m.stats);
        };
        child.on('message', onMessage);
        child.send({ type: 'stats', id });
      });
    },
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      })();
      return stopping;
    },
    output: () => lines.join('\n'),
  };
}

async function waitReady(url: string, exited: Promise<number | null>): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (gone) throw new Error('the process exited');
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out');
}

/** A fresh temporary DATA_DIR; `remove` leaves it for {@link removeLeftovers} at the end of the bench run. */
export async function tempDataDir(label: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `spotcheck-bench-${label}-`));
  return { dir, remove: async () => removeLater(dir) };
}

/**
 * Folders of finished benches, removed together once the whole run is over (`bench/main.ts`). Removed right away,
 * the tens of thousands of receipt files of one bench made the next bench's file creation several times slower:
 * this machine's ext4 has no journal, and an ext4 without one skips inodes freed in the last minutes when it
 * allocates a new one (`perf` showed the crawl's writer thread in `recently_deleted`, 280 µs per file instead of 20).
 */
const leftovers: string[] = [];

/** Leaves `dir` for {@link removeLeftovers}. */
export function removeLater(dir: string): void {
  leftovers.push(dir);
}

/** Removes every folder left by {@link removeLater}. */
export async function removeLeftovers(): Promise<void> {
  for (const dir of leftovers.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** Records in the journal under `dataDir` (one line each) and receipt files beside it. */
export async function countDurable(
  dataDir: string,
  options: { receipts?: boolean } = {},
): Promise<{ journalRecords: number; receiptFiles: number }> {
  let journalRecords = 0;
  const journal = join(dataDir, 'journal');
  for (const name of await readdir(journal)) {
    if (!name.endsWith('.jsonl')) continue;
    const data = await readFile(join(journal, name));
    for (const byte of data) if (byte === 0x0a) journalRecords++;
  }
  if (options.receipts === false) return { journalRecords, receiptFiles: 0 };
  const receiptFiles = (await readdir(join(dataDir, 'receipts'))).filter((n) => n.endsWith('.json')).length;
  return { journalRecords, receiptFiles };
}
