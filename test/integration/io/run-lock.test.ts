/**
 * The run lock (`io/runs/lock.ts`): a live holder refuses a second run; a lock whose process is gone, a zombie, being
 * torn down after SIGKILL (waited for briefly), whose pid now belongs to another process (start time differs), or
 * that is unreadable, is taken over.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ProcessState, processState } from '../../../io/process-alive.ts';
import { acquireRunLock, RunLockedError } from '../../../io/runs/lock.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'sc-lock-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const lockFile = () => join(root, 'run.lock');
const owner = (pid: number, extra: object = {}) =>
  JSON.stringify({ pid, start: null, host: hostname(), started_at: '2026-11-24T00:00:00.000Z', ...extra });

describe('run lock', () => {
  it('refuses a second holder while the first lives, and is free again once released', async () => {
    const lock = await acquireRunLock(root, 'crawl');
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid });
    const refused = acquireRunLock(root, 'crawl');
    await expect(refused).rejects.toBeInstanceOf(RunLockedError);
    await expect(refused).rejects.toThrow(`another crawl (pid ${process.pid}, host ${hostname()}`);
    await lock.release();
    expect(existsSync(lockFile())).toBe(false);
    await (await acquireRunLock(root, 'crawl')).release();
  });

  it('is held by a live process of its own, and taken over once that process is killed', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await writeFile(lockFile(), owner(child.pid!));
      await expect(acquireRunLock(root, 'crawl')).rejects.toThrow(`pid ${child.pid}`);
    } finally {
      const gone = new Promise((done) => child.once('exit', done));
      child.kill('SIGKILL');
      await gone;
    }
    const lock = await acquireRunLock(root, 'crawl');
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it.skipIf(!existsSync('/proc/self/stat'))(
    'takes over a lock whose pid was reused by another process, and an unreadable lock',
    async () => {
      // This process is alive, but its start time is not the one the lock recorded.
      await writeFile(lockFile(), owner(process.pid, { start: '1' }));
      await (await acquireRunLock(root, 'crawl')).release();
      await writeFile(lockFile(), '{"pid": ');
      await (await acquireRunLock(root, 'crawl')).release();
    },
  );

  it('gives way to a lock of another host (its process cannot be seen from here)', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(lockFile(), owner(dead, { host: 'elsewhere.example' }));
    await expect(acquireRunLock(root, 'crawl')).rejects.toThrow('host elsewhere.example');
  });

  it.skipIf(!existsSync('/proc/self/stat'))(
    'takes over a lock whose process is a zombie (killed, not yet reaped by its parent)',
    async () => {
      // `sh` starts a child that exits 0.2 s later, once `sh` has become `sleep`, which never reaps it: a zombie.
      const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      try {
        const pid = Number(
          await new Promise<string>((done) => parent.stdout.once('data', (chunk) => done(String(chunk)))),
        );
        await vi.waitFor(() => expect(processState(pid)).toBe('zombie'), { timeout: 20_000 });
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
        await writeFile(lockFile(), owner(pid, { start }));
        const lock = await acquireRunLock(root, 'crawl');
        expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid });
        await lock.release();
      } finally {
        parent.kill('SIGKILL');
      }
    },
  );

  it('waits briefly for a holder being torn down after SIGKILL, then takes the lock over', async () => {
    const states: ProcessState[] = ['dying', 'dying', 'dying', 'gone'];
    const seen: ProcessState[] = [];
    const waits: number[] = [];
    await writeFile(lockFile(), owner(424242));
    const lock = await acquireRunLock(root, 'crawl', () => new Date(), {
      state: () => {
        const state = states.shift() ?? 'gone';
        seen.push(state);
        return state;
      },
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    // Three polls while it is torn down, then gone (and looked at once more as the stale lock is moved aside).
    expect(seen.slice(0, 4)).toEqual(['dying', 'dying', 'dying', 'gone']);
    expect(waits.length).toBe(3);
    await lock.release();
  });

  it('refuses, naming the SIGKILL, a holder still being torn down after the brief wait', async () => {
    await writeFile(lockFile(), owner(424242));
    let waited = 0;
    await expect(
      acquireRunLock(root, 'crawl', () => new Date(), {
        state: () => 'dying',
        sleep: async (ms) => {
          waited += ms;
        },
      }),
    ).rejects.toThrow(/being torn down after SIGKILL/);
    expect(waited).toBeGreaterThanOrEqual(5000);
    expect(waited).toBeLessThan(6000);
  });
});

describe('processState', () => {
  it('reads the kernel state: running, zombie, being torn down, gone', () => {
    const stat = (state: string, flags: number) =>
      `123 (node (x) y) ${state} 1 2 3 4 5 ${flags} 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0`;
    const status = (pending: string) => `Name:\tnode\nSigPnd:\t${pending}\nShdPnd:\t0000000000000000\n`;
    const read = (s: string, st: string) => (path: string) => (path.endsWith('/stat') ? s : st);
    expect(processState(123, read(stat('S', 0x400000), status('0000000000000000')))).toBe('running');
    expect(processState(123, read(stat('Z', 0x40804c), status('0000000000000000')))).toBe('zombie');
    expect(processState(123, read(stat('X', 0x4), status('0000000000000000')))).toBe('zombie');
    // Exiting (PF_EXITING), or SIGKILL (signal 9, bit 8) pending: it never runs its own code again.
    expect(processState(123, read(stat('D', 0x400004), status('0000000000000000')))).toBe('dying');
    expect(processState(123, read(stat('R', 0x400000), status('0000000000000100')))).toBe('dying');
    expect(processState(process.pid)).toBe('running');
    expect(processState(2 ** 22 + 12345)).toBe('gone');
  });
});
