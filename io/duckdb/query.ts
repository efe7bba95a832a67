/**
 * How code on a DuckDB connection binds values and reads rows. The service's store (`io/store/duckdb.ts`) and
 * hosted mode's integrator file (`io/integrators/duckdb.ts`) both query through here, so rows come back in one shape.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';

/** Rows bound in one multi-row statement (host columns filled, watch batches): a few statements per thousand
 *  rows, never one statement binding a whole table's values. */
export const CHUNK = 200;

/** Runs a query and returns its rows as plain objects. */
export async function select(db: DuckDBConnection, sql: string, values: DuckDBValue[]) {
  const reader = await db.runAndReadAll(sql, values);
  return reader.getRowObjectsJS() as Array<Record<string, unknown>>;
}
