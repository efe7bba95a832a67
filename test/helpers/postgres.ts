/**
 * A real, throwaway PostgreSQL cluster for tests (never a mock). A suite calls `startPostgres()` in
 * `beforeAll`: the cluster lives in a temp folder, listens on a free loopback port and on a unix socket in that
 * folder, and is stopped and removed by `stop()`. Each test may take its own database (`createDatabase`).
 *
 * The binaries are Debian's `postgresql` package (`/usr/lib/postgresql/<major>/bin`, or `PG_BIN`); `.ci/run`
 * installs it. PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from '../../sandbox/ports.ts';

/** The folder of `initdb` and `pg_ctl`, null when PostgreSQL is not installed. */
export function postgresBin(): string | null {
  const candidates = process.env.PG_BIN ? [process.env.PG_BIN] : [];
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...majors.map((major) => join(root, major, 'bin')));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

/**
 * Why PostgreSQL suites skip on this machine, null when they run. In CI they run: `.ci/run` installs PostgreSQL and
 * sets `SPOTCHECK_REQUIRE_POSTGRES=1`, so missing binaries fail the suites instead of skipping them.
 */
export const postgresMissing: string | null =
  postgresBin() === null && process.env.SPOTCHECK_REQUIRE_POSTGRES !== '1'
    ? 'PostgreSQL binaries not found (install Debian `postgresql` or set PG_BIN): PostgreSQL suites skip'
    : null;
if (postgresMissing) console.warn(`[test] ${postgresMissing}`);

export type TestPostgres = {
  /** `postgres://` URL of the cluster's `postgres` database, over loopback TCP. */
  url: string;
  /** The server's version, e.g. `15.14`. */
  version: string;
  /** The cluster's data directory (its `postmaster.pid` names the server's process). */
  dataDir: string;
  /** A fresh empty database; resolves to its URL. */
  createDatabase(): Promise<string>;
  /**
   * Stops (`SIGSTOP`) or lets go on (`SIGCONT`) every process of the cluster: frozen, it accepts connections and
   * reads queries but answers nothing, as a stalled or unreachable host looks to a client.
   */
  signal(name: 'SIGSTOP' | 'SIGCONT'): void;
  /**
   * Bytes clients sent the cluster over TCP that it has not read yet (the receive queues of its connections, from
   * `/proc/net/tcp`): while it is frozen, above zero once a client's query is waiting on it.
   */
  unreadBytes(): number;
  /** Stops the server as a crash would, keeping its data: clients see their connections end and new ones refused. */
  down(): void;
  /** Starts the server stopped by `down` again, on the same port and data. */
  up(): void;
  stop(): Promise<void>;
};

let databases = 0;

/**
 * Starts a throwaway cluster; throws when the binaries are missing (guard suites with `postgresMissing`). `durable`
 * keeps fsync and synchronous commit on, as in production (benchmarks); tests run without.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const bin = postgresBin();
  if (bin === null) throw new Error(postgresMissing ?? 'PostgreSQL missing');
  const dir = mkdtempSync(join(tmpdir(), 'spotcheck-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) => {
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args];
    execFileSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  };
  if (asRoot) chownSync(dir, uid('postgres'), gid('postgres'));
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  // fsync off in tests: a test cluster is thrown away, and durability of the database is PostgreSQL's own promise.
  const durability = options.durable ? '-c fsync=on -c synchronous_commit=on' : '-c fsync=off';
  const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${durability} -c max_connections=200`;
  run('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const [row] = await admin<Array<{ v: string }>>`SELECT current_setting('server_version') AS v`;
  return {
    url,
    version: row?.v ?? 'unknown',
    dataDir: data,
    async createDatabase() {
      databases += 1;
      const name = `t${process.pid}_${databases}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    signal(name) {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const children = execFileSync('pgrep', ['-P', String(postmaster)])
        .toString()
        .trim()
        .split('\n');
      for (const pid of [postmaster, ...children.map(Number)]) process.kill(pid, name);
    },
    unreadBytes() {
      return receiveQueued(port);
    },
    down() {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    up() {
      run('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start']);
    },
    async stop() {
      await admin.end({ timeout: 1 });
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The bytes waiting in the receive queues of the established loopback TCP connections to local `port`. */
function receiveQueued(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let queued = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, localAddress, , state, queues] = line.trim().split(/\s+/);
    // State 01 is ESTABLISHED; the queues read `tx_queue:rx_queue` in hex.
    if (localAddress === local && state === '01') queued += Number.parseInt(queues?.split(':')[1] ?? '0', 16);
  }
  return queued;
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user]).toString().trim());
}

function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user]).toString().trim());
}

/**
 * Inside a `describe`: a throwaway cluster started before its tests and stopped after them. Each test takes its own
 * database from it.
 * @example const pg = usePostgres(); it('…', async () => { const url = await pg.createDatabase(); … });
 */
export function usePostgres(): Pick<TestPostgres, 'createDatabase'> {
  let pg: TestPostgres | null = null;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });
  return {
    createDatabase() {
      if (pg === null) throw new Error('usePostgres: no cluster runs (call it inside a describe)');
      return pg.createDatabase();
    },
  };
}
