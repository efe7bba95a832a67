/**
 * Opening a DuckDB database with the service's bounds on it. DuckDB's own defaults are made for one analytical
 * database owning the machine: a buffer pool of 80 % of RAM and a thread per core, per database. The service opens
 * three (the index, the integrators, the watches) in one process, and a pool that large is never given back: pages
 * read once stay cached, so the process's memory grows toward the size of its files. With a cap, DuckDB evicts
 * unpinned pages and spills large joins, sorts and aggregates to `<file>.tmp` beside the database; a statement that
 * needs more pinned memory than the cap fails with an out-of-memory error rather than growing the process.
 */
import { availableParallelism } from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';

/** The bounds of one database (`DUCKDB_MEMORY_MB`, `DUCKDB_THREADS`; README "Configuration"). */
export type DuckDbLimits = {
  /** DuckDB's `memory_limit` in MiB: the most its buffer pool holds for this database. */
  memoryMb: number;
  /** DuckDB's `threads`: the worker threads of this database's queries. */
  threads: number;
};

/**
 * The defaults (docs/decisions.md "Runtime"): 1 GiB each, four times what 2,000,000 rows under a primary key needed
 * without an out-of-memory error (256 MiB: the index pages were written out and evicted), so a large lookup or
 * import never fails on the cap; a thread per core, as DuckDB's own default.
 */
export const DUCKDB_LIMITS: DuckDbLimits = { memoryMb: 1024, threads: Math.min(256, availableParallelism()) };

/** Opens (or creates) the database at `path` (`':memory:'` for one that forgets) within `limits`. */
export function openDuckDbInstance(
  path: string,
  limits: DuckDbLimits = DUCKDB_LIMITS,
): Promise<DuckDBInstance> {
  return DuckDBInstance.create(path, {
    memory_limit: `${limits.memoryMb}MiB`,
    threads: String(limits.threads),
  });
}
