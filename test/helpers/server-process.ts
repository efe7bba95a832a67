/**
 * The real server (`api/main.ts`) in a child process, for tests that kill it (CONTRIBUTING.md, "Durability"),
 * started as test/helpers/entry.ts says.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { ENTRY_ENV } from './entry.ts';

export { freePort } from '../../sandbox/ports.ts';

const MAIN = join(import.meta.dirname, '../../api/main.ts');
/**
 * How long a start may take before the test gives up on it. Only a child that neither listens nor exits waits it
 * out (an exit fails at once), so it is far above the few seconds a start takes on a loaded 2-core machine.
 */
const START_DEADLINE_MS = 90_000;

export type ServerProcess = {
  base: string;
  child: ChildProcess;
  /** Resolves with the exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** What it wrote to stderr so far (also passed on to the test's own stderr). */
  stderr(): string;
  /** What it wrote to stdout so far (its start-up lines, then `SIGTERM: closing` and the like). */
  stdout(): string;
};

/**
 * Starts the server on `port` over `dataDir` with `env`; resolves once it says it listens there. Its own line, not an
 * answer on the port: a port taken by another suite's server in the meantime would answer for it.
 */
export async function startServerProcess(
  dataDir: string,
  port: number,
  env: Record<string, string>,
): Promise<ServerProcess> {
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      ...ENTRY_ENV,
      BASE_URL: base,
      DATA_DIR: dataDir,
      PORT: String(port),
      TRUST_PROXY: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    if (stderr.length < 65_536) stderr += chunk.toString();
  });
  let stdout = '';
  const listening = new Promise<boolean>((resolve) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      // Read on to the end, so the server never blocks on a full pipe.
      if (stdout.length > 65_536) return;
      stdout += chunk.toString();
      if (stdout.includes(`listening on ${base} `)) resolve(true);
    });
    void exited.then(() => resolve(false));
    setTimeout(() => resolve(false), START_DEADLINE_MS).unref();
  });
  if (await listening) return { base, child, exited, stderr: () => stderr, stdout: () => stdout };
  child.kill('SIGKILL');
  throw new Error(
    `server did not start on ${base} (exit ${child.exitCode ?? child.signalCode ?? `none in ${START_DEADLINE_MS} ms`})`,
  );
}
