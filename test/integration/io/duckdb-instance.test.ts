import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDuckDbInstance } from '../../../io/duckdb/instance.ts';
import { openIntegratorStore } from '../../../io/integrators/duckdb.ts';
import { openDuckDbStore } from '../../../io/store/duckdb.ts';
import { openDuckDbWatchStore } from '../../../io/watches/duckdb.ts';

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** DuckDB's own reading of the settings of a database opened with `limits`. */
async function settingsOf(path: string, limits?: { memoryMb: number; threads: number }) {
  const instance = await openDuckDbInstance(path, limits);
  try {
    const db = await instance.connect();
    const reader = await db.runAndReadAll(
      "SELECT current_setting('memory_limit') AS memory, current_setting('threads') AS threads",
    );
    return reader.getRowObjectsJS()[0];
  } finally {
    instance.closeSync();
  }
}

describe('the service opens DuckDB within bounds', () => {
  it('caps memory at 1 GiB by default, not at 80 % of RAM, with a thread per core', async () => {
    expect(await settingsOf(':memory:')).toEqual({
      memory: '1.0 GiB',
      threads: BigInt(availableParallelism()),
    });
    expect(await settingsOf(':memory:', { memoryMb: 64, threads: 1 })).toEqual({
      memory: '64.0 MiB',
      threads: 1n,
    });
  });

  it('opens the index, the integrators and the watches with the bounds it is given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'duckdb-limits-'));
    dirs.push(dir);
    const limits = { memoryMb: 48, threads: 1 };
    // DuckDB's own opener, watched (a spy, restored after): which settings each store asked it for.
    const create = vi.spyOn(DuckDBInstance, 'create');
    const store = await openDuckDbStore(join(dir, 'spotcheck.duckdb'), { limits });
    const integrators = await openIntegratorStore(join(dir, 'integrators.duckdb'), undefined, limits);
    const watches = await openDuckDbWatchStore(join(dir, 'watches.duckdb'), limits);
    // Each still works within a small cap.
    expect(await watches.pending()).toBe(0);
    expect(await integrators.integrators()).toEqual([]);
    expect(create.mock.calls.map(([path, asked]) => [path?.slice(dir.length + 1), asked])).toEqual([
      ['spotcheck.duckdb', { memory_limit: '48MiB', threads: '1' }],
      ['integrators.duckdb', { memory_limit: '48MiB', threads: '1' }],
      ['watches.duckdb', { memory_limit: '48MiB', threads: '1' }],
    ]);
    await Promise.all([store.close(), integrators.close(), watches.close()]);
  });
});
