/**
 * The real server (`api/main.ts`) in a child process, for tests that kill it (design.md promise 3).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

export type ServerProcess = { base: string; child: ChildProcess; exited: Promise<unknown> };

/** A loopback port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts the server on `port` over `dataDir` with `env`; resolves once `/healthz` answers. */
export async function startServerProcess(
  dataDir: string,
  port: number,
  env: Record<string, string>,
): Promise<ServerProcess> {
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    env: { ...process.env, BASE_URL: base, DATA_DIR: dataDir, PORT: String(port), TRUST_PROXY: '1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, child, exited };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('server did not start');
}
