/**
 * The PostgreSQL store's paid calls. The `paid_calls` table keeps every call and every instance shares it; each
 * instance also holds the last calls of each service in memory (`io/store/recent-paid-calls.ts`), as the DuckDB store does,
 * so a lookup reads one row instead of ranking the table (at 1,000,000 calls that ranking took 300 ms a lookup).
 *
 * Every add takes the next number of `paid_calls_version` and writes it on its row, in one transaction. The version
 * row stays locked until that transaction commits, so the rows of versions up to the one a reader sees are all
 * committed: a query reads the version, and when it moved, takes in just the rows numbered after what this instance
 * holds (a call added again under the same receipt replaces the one it held). The first query loads the recent calls
 * of the whole table once, in one snapshot with its version.
 */
import type { Sql } from 'postgres';
import type { PaidCallRecord } from '../../core/catalog.ts';
import { toPaidCall } from './_rows.ts';
import { hostOf, type PaidCallQuery, type Store } from './port.ts';
import { createRecentPaidCalls, RECENT_KEPT, type RecentPaidCalls } from './recent-paid-calls.ts';

/** The paid-call half of the store port, as the PostgreSQL store answers it, and a way to load it ahead. */
export type PostgresPaidCalls = Pick<Store, 'addPaidCall' | 'paidCalls'> & {
  /** Loads the recent calls now, so the first lookup does not wait for them (4 s at 1,000,000 calls). */
  preloadPaidCalls(): Promise<void>;
};

/** newestFirst (core/catalog.ts): time, then settlement transaction, both descending. */
const NEWEST_FIRST = "called_at DESC, coalesce(settlement_tx, '') DESC";

type Version = Array<{ version: string }>;

/** Paid calls on `sql` (a migrated pool); the recent ones are loaded on the first query, not at start. */
export function postgresPaidCalls(sql: Sql): PostgresPaidCalls {
  const state: PaidCallsState = { sql, memory: null, catchingUp: null };
  return {
    async preloadPaidCalls() {
      await recentNow(state);
    },
    addPaidCall: (r) => addPaidCall(state, r),
    paidCalls: (query) => queryPaidCalls(state, query),
  };
}

/** One instance's view of the table: the recent calls of every row up to `memory.version`. */
type PaidCallsState = {
  readonly sql: Sql;
  memory: { version: bigint; recent: RecentPaidCalls } | null;
  catchingUp: Promise<void> | null;
};

async function addPaidCall(state: PaidCallsState, r: PaidCallRecord): Promise<void> {
  // The version row is taken first and held to the commit: adds of every instance are numbered in commit order.
  const version = await state.sql.begin(async (tx) => {
    const [row] = await tx<Version>`UPDATE paid_calls_version SET version = version + 1 RETURNING version`;
    const next = row?.version ?? '0';
    // Idempotent by receipt: a run taken in again (after a restart) replaces its rows, never doubles them.
    if (r.receipt_id !== null) await tx`DELETE FROM paid_calls WHERE receipt_id = ${r.receipt_id}`;
    await tx`INSERT INTO paid_calls ${tx({ ...r, host: hostOf(r.endpoint_url), version: next })}`;
    return BigInt(next);
  });
  // Memory one version behind holds every row but this one: it takes the call in as the table did.
  const { memory } = state;
  if (memory !== null && memory.version + 1n === version) {
    memory.recent.add(r);
    memory.version = version;
  }
}

/** The newest calls of each service matching the query: from memory when it keeps that many, else the table. */
async function queryPaidCalls(
  state: PaidCallsState,
  { task, endpoint, host, perService }: PaidCallQuery,
): Promise<readonly PaidCallRecord[]> {
  const { sql } = state;
  if (perService <= RECENT_KEPT) {
    const recent = (await recentNow(state)).query({
      ...(task === undefined ? {} : { task }),
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(host === undefined ? {} : { host }),
      perService,
    });
    if (recent !== null) return recent;
  }
  const filters = [
    task !== undefined ? sql`task = ${task}` : null,
    endpoint !== undefined ? sql`(service_id = ${endpoint} OR endpoint_url = ${endpoint})` : null,
    host !== undefined ? sql`host = ${host}` : null,
  ].filter((f) => f !== null);
  const where = filters.reduce((acc, f, i) => (i === 0 ? sql`WHERE ${f}` : sql`${acc} AND ${f}`), sql``);
  const rows = await sql`SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY service_id
      ORDER BY ${sql.unsafe(NEWEST_FIRST)}) AS n FROM paid_calls ${where}) ranked
    WHERE n <= ${Math.max(0, Math.floor(perService))} ORDER BY ${sql.unsafe(NEWEST_FIRST)}, service_id`;
  return rows.map(toPaidCall);
}

/** The recent calls as of now. */
async function recentNow(state: PaidCallsState): Promise<RecentPaidCalls> {
  const [row] = await state.sql<Version>`SELECT version FROM paid_calls_version`;
  const version = BigInt(row?.version ?? 0);
  while (state.memory === null || state.memory.version < version) {
    state.catchingUp ??= catchUp(state, version).finally(() => {
      state.catchingUp = null;
    });
    await state.catchingUp;
  }
  return state.memory.recent;
}

/** Brings memory up to `version`: the first time a whole load, then the rows numbered after what it holds. */
async function catchUp(state: PaidCallsState, version: bigint): Promise<void> {
  if (state.memory === null) {
    state.memory = await loadRecent(state.sql);
    return;
  }
  const memory = state.memory;
  const rows = await state.sql`SELECT * FROM paid_calls WHERE version > ${memory.version.toString()}
    AND version <= ${version.toString()} ORDER BY version`;
  // Adds of this instance may have moved memory on meanwhile; a row it holds already is replaced by itself.
  for (const row of rows) memory.recent.add(toPaidCall(row));
  if (version > memory.version) memory.version = version;
}

/** The recent calls of the whole table and its version, from one snapshot. */
async function loadRecent(sql: Sql): Promise<{ version: bigint; recent: RecentPaidCalls }> {
  return sql.begin('isolation level repeatable read', async (tx) => {
    const [row] = await tx<Version>`SELECT version FROM paid_calls_version`;
    const rows = await tx.unsafe(
      `SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY service_id ORDER BY ${NEWEST_FIRST}) AS by_service,
         row_number() OVER (PARTITION BY service_id, task ORDER BY ${NEWEST_FIRST}) AS by_task FROM paid_calls) ranked
       WHERE by_service <= ${RECENT_KEPT} OR by_task <= ${RECENT_KEPT}`,
    );
    const recent = createRecentPaidCalls();
    for (const call of rows) recent.add(toPaidCall(call));
    return { version: BigInt(row?.version ?? 0), recent };
  });
}
