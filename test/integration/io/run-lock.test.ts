/**
 * The run lock (`io/run-lock.ts`): a live holder refuses a second run; a lock whose process is gone, whose pid now
 * belongs to another process (start time differs), or that is unreadable, is taken over.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireRunLock, RunLockedError } from '../../../io/run-lock.ts';

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
});
