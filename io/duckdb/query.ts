/**
 * How code on a DuckDB connection binds values and reads rows. The service's store (`io/store/duckdb.ts`) and
 * hosted mode's integrator file (`io/integrators/duckdb.ts`) both query through here, so rows come back in one shape.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';

/** Rows bound in one multi-row statement (listings imported, host columns filled): a few statements per thousand
 *  rows, never one statement binding a whole table's values. */
export const CHUNK = 200;

/** Doubles are bound as text and cast in SQL: the driver binds an integer-valued number as BIGINT, which
 *  overflows for a price such as 1e71 that a hostile challenge can produce. */
export function double(value: number | null): string | null {
  return value === null || !Number.isFinite(value) ? null : String(value);
}

/** Runs a query and returns its rows as plain objects. */
export async function select(db: DuckDBConnection, sql: string, values: DuckDBValue[]) {
  const reader = await db.runAndReadAll(sql, values);
  return reader.getRowObjectsJS() as Array<Record<string, unknown>>;
}
