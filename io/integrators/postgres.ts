/**
 * The integrator store in PostgreSQL (`DATABASE_URL`): integrators, keys (only the hash of the secret),
 * usage and invoices shared by every instance, the same port (`port.ts`) as the DuckDB file (`duckdb.ts`). Usage is
 * counted when a call reserves it (`io/hosted-meter/postgres.ts`), so there is no journal to fold: `foldUsage` is refused.
 *
 * The invoice half is `_postgres-invoices.ts`.
 *
 * Every instance keeps the keys in memory (a hosted call never waits for the database to authenticate); a change of
 * integrators or keys is announced with `NOTIFY`, and {@link watchIntegrators} tells each instance to reload.
 */
import type { Sql } from 'postgres';
import { postgresInvoices } from './_postgres-invoices.ts';
import { integratorOf, keyOf } from './_rows.ts';
import type { IntegratorStore } from './port.ts';

/** The channel on which changes of integrators and keys are announced. */
const CHANNEL = 'spotcheck_integrators';

/** The store over a migrated pool (the pool is the caller's to end). */
export function postgresIntegratorStore(sql: Sql): IntegratorStore {
  const changed = () => sql`SELECT pg_notify(${CHANNEL}, '')`.then(() => undefined);
  return {
    async createIntegrator(row) {
      await sql`INSERT INTO integrators (id, name, credit_limit_atomic, created_at)
        VALUES (${row.id}, ${row.name}, ${row.creditLimitAtomic.toString()}, ${row.createdAt})`;
      await changed();
    },
    async addKey(row) {
      await sql`INSERT INTO service_keys (id, integrator, secret_hash, label, state, created_at, changed_at)
        VALUES (${row.id}, ${row.integrator}, ${row.secretHash}, ${row.label}, ${row.state}, ${row.createdAt},
          ${row.changedAt})`;
      await changed();
    },
    async setKeyState(keyId, state, at) {
      await sql`UPDATE service_keys SET state = ${state}, changed_at = ${at} WHERE id = ${keyId}`;
      await changed();
    },
    integrators: async () => (await sql`SELECT * FROM integrators ORDER BY id`).map(integratorOf),
    keys: async () => (await sql`SELECT * FROM service_keys ORDER BY integrator, created_at, id`).map(keyOf),
    usageCursor: async () => null,
    foldUsage: async () => {
      throw new Error('With PostgreSQL, hosted usage is counted when reserved; there is no journal to fold.');
    },
    async usage(filter) {
      const conditions = [
        filter.integrator !== undefined ? sql`u.integrator = ${filter.integrator}` : null,
        filter.month !== undefined ? sql`u.month = ${filter.month}` : null,
      ].filter((c) => c !== null);
      const where = conditions.reduce((acc, c, i) => (i === 0 ? sql`AND ${c}` : sql`${acc} AND ${c}`), sql``);
      const rows = await sql`SELECT u.integrator, u.month, u.calls,
          (SELECT count(*) FROM hosted_end_users e WHERE e.integrator = u.integrator AND e.month = u.month) AS end_users
        FROM hosted_usage u WHERE u.calls > 0 ${where} ORDER BY u.month, u.integrator`;
      return rows.map((r) => ({
        integrator: String(r.integrator),
        month: String(r.month),
        calls: Number(r.calls),
        endUsers: Number(r.end_users),
      }));
    },
    endUserHashes: async (integrator, month) =>
      (
        await sql`SELECT end_user FROM hosted_end_users WHERE integrator = ${integrator} AND month = ${month}`
      ).map((r) => String(r.end_user)),
    ...postgresInvoices(sql),
    close: async () => {},
  };
}

/** Calls `onChange` whenever any instance or CLI changes integrators or keys; resolves with the stop function. */
export async function watchIntegrators(sql: Sql, onChange: () => void): Promise<() => Promise<void>> {
  const { unlisten } = await sql.listen(CHANNEL, onChange);
  return unlisten;
}
