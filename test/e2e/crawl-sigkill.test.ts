/**
 * `npm run crawl` killed with SIGKILL in the middle, then `--resume`: the run finishes, no URL is
 * ever requested twice, no host sees more than 3 requests in flight or a payment header, and the published files
 * are whole. A second crawl of the same DATA_DIR while one runs fails at once (the run lock, `io/runs/lock.ts`), and
 * the lock a SIGKILL leaves behind does not block `--resume`. The crawl runs as its own process, as an operator
 * runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readPointer, runPaths } from '../../io/runs/paths.ts';
import { BASE, BASE_USDC_TOKEN, FLEET_WALLET } from '../../sandbox/sellers/constants.ts';
import { base64Json, v2Accept, v2Required } from '../../sandbox/sellers/wire.ts';
import { ENTRY_ENV } from '../helpers/entry.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PER_HOST_URLS = 20;

/** A slow seller host that counts what it sees. */
type Host = {
  server: Server;
  origin: string;
  seen: Map<string, number>;
  maxInFlight: number;
  paymentHeaders: number;
};

async function startHost(): Promise<Host> {
  const host: Host = {
    server: createServer(),
    origin: '',
    seen: new Map(),
    maxInFlight: 0,
    paymentHeaders: 0,
  };
  let inFlight = 0;
  host.server.on('request', (req, res) => {
    inFlight++;
    host.maxInFlight = Math.max(host.maxInFlight, inFlight);
    host.seen.set(req.url ?? '', (host.seen.get(req.url ?? '') ?? 0) + 1);
    if (req.headers['payment-signature'] !== undefined || req.headers['x-payment'] !== undefined)
      host.paymentHeaders++;
    // A slow host (the wait is the test's subject): many probes are in flight when the crawl is killed.
    void held.then(() => setTimeout(answer, 150));
    const answer = () => {
      inFlight--;
      const required = v2Required(`${host.origin}${req.url}`, [
        v2Accept(BASE, BASE_USDC_TOKEN, FLEET_WALLET),
      ]);
      res.writeHead(402, { 'content-type': 'application/json', 'payment-required': base64Json(required) });
      res.end('{}');
    };
  });
  await new Promise<void>((done) => host.server.listen(0, '127.0.0.1', done));
  host.origin = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  return host;
}

/** While a test holds it, hosts answer nothing: the first crawl is surely still running. */
let held: Promise<void> = Promise.resolve();

let hosts: Host[];
let dir: string;
beforeAll(async () => {
  hosts = [await startHost(), await startHost()];
  dir = await mkdtemp(join(tmpdir(), 'sc-sigkill-'));
});
afterAll(async () => {
  for (const host of hosts ?? []) {
    host.server.closeAllConnections();
    await new Promise<void>((done) => host.server.close(() => done()));
  }
  await rm(dir, { recursive: true, force: true });
});

/** The crawl's environment: vitest sets BASE_URL to '/' (Vite's); the crawl's is the service's public origin. */
function crawlEnv(data: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...ENTRY_ENV,
    DATA_DIR: data,
    PROBE_ALLOW_CIDRS: '127.0.0.0/8',
    BASE_URL: 'http://127.0.0.1:8402',
  };
}

/** `npm run crawl`, started as test/helpers/entry.ts says. */
function crawl(args: string[], data = join(dir, 'data')): ChildProcess {
  return spawn(process.execPath, [join(ROOT, 'crawl/main.ts'), ...args], {
    cwd: ROOT,
    env: crawlEnv(data),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => child.once('exit', (code) => done(code)));
}

const requests = () => hosts.reduce((sum, h) => sum + [...h.seen.values()].reduce((a, b) => a + b, 0), 0);

describe('npm run crawl, SIGKILL, then --resume', () => {
  it('finishes the run without requesting any URL twice', { timeout: 120_000 }, async () => {
    const listings = hosts.flatMap((host, h) =>
      Array.from({ length: PER_HOST_URLS }, (_, i) => ({
        url: `${host.origin}/item/${i}`,
        source: `list-${h}`,
        price_usd: 0.01,
      })),
    );
    const file = join(dir, 'listings.json');
    await writeFile(file, JSON.stringify(listings));

    const first = crawl(['--source', file]);
    let log = '';
    first.stderr?.on('data', (chunk) => {
      log += String(chunk);
    });
    const firstExit = exited(first);
    for (let waited = 0; requests() < 10 && waited < 60_000; waited += 20)
      await new Promise((r) => setTimeout(r, 20));
    expect(requests(), log).toBeGreaterThanOrEqual(10);

    // A second crawl of the same DATA_DIR while the first runs: refused before it reads a source or sends anything.
    let release = () => {};
    held = new Promise((done) => {
      release = done;
    });
    const rival = crawl(['--source', file]);
    let rivalErr = '';
    rival.stderr?.on('data', (chunk) => {
      rivalErr += String(chunk);
    });
    const rivalExit = await exited(rival);
    release();
    expect(rivalExit, rivalErr).toBe(1);
    expect(rivalErr).toMatch(new RegExp(`another crawl \\(pid ${first.pid}[,)].*is running`));

    first.kill('SIGKILL');
    await firstExit;
    const beforeResume = requests();
    expect(beforeResume).toBeLessThan(listings.length);

    const paths = runPaths(join(dir, 'data'), 'crawl');
    expect(await readPointer(paths)).toBeNull();
    // The killed crawl's lock is still there; its process is not, so the lock is stale and taken over.
    expect(existsSync(join(paths.root, 'run.lock'))).toBe(true);
    const second = crawl(['--resume']);
    let out = '';
    second.stdout?.on('data', (chunk) => {
      out += String(chunk);
    });
    expect(await exited(second)).toBe(0);
    expect(out).toMatch(/published run/);
    expect(existsSync(join(paths.root, 'run.lock'))).toBe(false);

    for (const host of hosts) {
      expect([...host.seen.values()].every((n) => n === 1)).toBe(true);
      expect(host.maxInFlight).toBeLessThanOrEqual(3);
      expect(host.paymentHeaders).toBe(0);
    }
    const pointer = await readPointer(paths);
    const runDir = join(paths.root, pointer!.path);
    const run = JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8'));
    const receipts = (await readdir(join(runDir, 'receipts'))).filter((name) => name.endsWith('.json'));
    expect(receipts.length + run.interrupted).toBe(listings.length);
    // An interrupted probe was journaled as started; its request may or may not have left before the kill.
    expect(requests()).toBeGreaterThanOrEqual(receipts.length);
    expect(requests()).toBeLessThanOrEqual(receipts.length + run.interrupted);
    expect(run).toMatchObject({ resumed: true, total_receipts: receipts.length });
    const page = JSON.parse(await readFile(join(runDir, 'skips', '1.json'), 'utf8'));
    expect(page).toMatchObject({ pages: 1, total_receipts: receipts.length, pay: receipts.length });
    const index = (await readFile(join(runDir, 'receipts.ndjson'), 'utf8')).trim().split('\n');
    expect(index).toHaveLength(receipts.length);
  });

  it.skipIf(!existsSync('/proc/self/stat'))(
    'takes the lock over for --resume right after the kill, while the killed crawl is still a zombie',
    { timeout: 120_000 },
    async () => {
      const data = join(dir, 'zombie-data');
      const file = join(dir, 'zombie-listings.json');
      await writeFile(
        file,
        JSON.stringify(
          hosts.flatMap((host, h) =>
            Array.from({ length: 6 }, (_, i) => ({
              url: `${host.origin}/z/${i}`,
              source: `z-${h}`,
              price_usd: 0.01,
            })),
          ),
        ),
      );
      let release = () => {};
      held = new Promise((done) => {
        release = done;
      });
      // `sh` starts the crawl and becomes `sleep`, which never reaps a child: once killed, the crawl stays a zombie
      // (its pid still answers signal 0) until the wrapper ends, as under a supervisor that does not wait.
      const wrapper = spawn(
        'sh',
        [
          '-c',
          '"$0" "$1" --source "$2" & echo $!; exec sleep 300',
          process.execPath,
          join(ROOT, 'crawl/main.ts'),
          file,
        ],
        { cwd: ROOT, env: crawlEnv(data), stdio: ['ignore', 'pipe', 'ignore'] },
      );
      try {
        const pid = Number(
          await new Promise<string>((done) =>
            wrapper.stdout.once('data', (chunk) => done(String(chunk).split('\n')[0]!)),
          ),
        );
        const before = requests();
        await vi.waitFor(() => expect(requests()).toBeGreaterThanOrEqual(before + 3), {
          timeout: 60_000,
          interval: 20,
        });
        process.kill(pid, 'SIGKILL');
        await vi.waitFor(
          async () => {
            const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
            expect(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)).toBe('Z');
          },
          { timeout: 20_000 },
        );
        release();
        const paths = runPaths(data, 'crawl');
        expect(existsSync(join(paths.root, 'run.lock'))).toBe(true);
        const resume = crawl(['--resume'], data);
        let out = '';
        let err = '';
        resume.stdout?.on('data', (chunk) => {
          out += String(chunk);
        });
        resume.stderr?.on('data', (chunk) => {
          err += String(chunk);
        });
        expect(await exited(resume), err).toBe(0);
        expect(out).toMatch(/published run/);
        expect((await readPointer(paths))?.run_id).toBeDefined();
      } finally {
        release();
        wrapper.kill('SIGKILL');
      }
    },
  );
});
