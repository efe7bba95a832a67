import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../../api/config.ts';

describe('DATABASE_URL', () => {
  it('is off by default: the embedded DuckDB', () => {
    expect(readConfig({}).database).toBeNull();
  });

  it('takes a postgres:// or postgresql:// URL, with a pool of 10 unless DATABASE_POOL_SIZE says', () => {
    expect(readConfig({ DATABASE_URL: 'postgres://spot@db.internal:5432/spotcheck' }).database).toEqual({
      url: 'postgres://spot@db.internal:5432/spotcheck',
      poolSize: 10,
      waitMs: 10_000,
    });
    expect(
      readConfig({ DATABASE_URL: 'postgresql://db/spotcheck', DATABASE_POOL_SIZE: '25' }).database,
    ).toEqual({ url: 'postgresql://db/spotcheck', poolSize: 25, waitMs: 10_000 });
  });

  it('stops the start-up on any other URL or pool size, naming the variable', () => {
    expect(() => readConfig({ DATABASE_URL: 'mysql://db/spotcheck' })).toThrow(/invalid DATABASE_URL/);
    expect(() => readConfig({ DATABASE_URL: 'spotcheck.duckdb' })).toThrow(/invalid DATABASE_URL/);
    expect(() => readConfig({ DATABASE_URL: 'postgres://db/spotcheck', DATABASE_POOL_SIZE: '0' })).toThrow(
      /invalid DATABASE_POOL_SIZE/,
    );
  });
});

describe('DATABASE_WAIT_MS and IMPORT_WAIT_MS', () => {
  it('wait 10 s on PostgreSQL and 15 s for a running server to take an import, unless they say otherwise', () => {
    const url = 'postgres://db/spotcheck';
    expect(readConfig({ DATABASE_URL: url }).database?.waitMs).toBe(10_000);
    expect(readConfig({ DATABASE_URL: url, DATABASE_WAIT_MS: '1500' }).database?.waitMs).toBe(1500);
    expect(readConfig({}).importWaitMs).toBe(15_000);
    expect(readConfig({ IMPORT_WAIT_MS: '500' }).importWaitMs).toBe(500);
  });

  it('stops the start-up on a wait that is not a whole number of milliseconds from 1 to an hour', () => {
    for (const bad of ['0', '-1', '1.5', '10s', '3600001']) {
      expect(() => readConfig({ DATABASE_WAIT_MS: bad }), bad).toThrow(/invalid DATABASE_WAIT_MS/);
      expect(() => readConfig({ IMPORT_WAIT_MS: bad }), bad).toThrow(/invalid IMPORT_WAIT_MS/);
    }
  });
});

describe('SHUTDOWN_DEADLINE_MS', () => {
  it('gives a clean close 30 s unless it says otherwise', () => {
    expect(readConfig({}).shutdownDeadlineMs).toBe(30_000);
    expect(readConfig({ SHUTDOWN_DEADLINE_MS: '' }).shutdownDeadlineMs).toBe(30_000);
    expect(readConfig({ SHUTDOWN_DEADLINE_MS: '2500' }).shutdownDeadlineMs).toBe(2500);
  });

  it('stops the start-up on a deadline that is not a whole number of milliseconds from 1 to an hour', () => {
    for (const bad of ['0', '-1', '1.5', '30s', '3600001'])
      expect(() => readConfig({ SHUTDOWN_DEADLINE_MS: bad }), bad).toThrow(/invalid SHUTDOWN_DEADLINE_MS/);
  });
});

describe('WATCH_LEASE_MS', () => {
  it('leases a watched endpoint for 15 s unless it says otherwise', () => {
    expect(readConfig({}).watchLeaseMs).toBe(15_000);
    expect(readConfig({ WATCH_LEASE_MS: '3000' }).watchLeaseMs).toBe(3000);
  });

  it('stops the start-up on a lease that is not a whole number of milliseconds from 1 s to an hour', () => {
    for (const bad of ['0', '999', '1.5', '15s', '3600001'])
      expect(() => readConfig({ WATCH_LEASE_MS: bad }), bad).toThrow(/invalid WATCH_LEASE_MS/);
  });
});

describe('DUCKDB_MEMORY_MB, DUCKDB_THREADS', () => {
  it('bounds each embedded database to 1 GiB and a thread per core unless they say otherwise', () => {
    expect(readConfig({}).duckdb).toEqual({ memoryMb: 1024, threads: availableParallelism() });
    expect(readConfig({ DUCKDB_MEMORY_MB: '96', DUCKDB_THREADS: '1' }).duckdb).toEqual({
      memoryMb: 96,
      threads: 1,
    });
  });

  it('stops the start-up on a cap below 16 MiB or a thread count that is not a whole number from 1', () => {
    for (const bad of ['0', '15', '1.5', '256MB', '1048577'])
      expect(() => readConfig({ DUCKDB_MEMORY_MB: bad }), bad).toThrow(/invalid DUCKDB_MEMORY_MB/);
    for (const bad of ['0', '2.5', 'all', '257'])
      expect(() => readConfig({ DUCKDB_THREADS: bad }), bad).toThrow(/invalid DUCKDB_THREADS/);
  });
});
