/**
 * The store contract against a real PostgreSQL (a throwaway cluster, `test/helpers/postgres.ts`), one fresh
 * database per case, and the start-up migrations when several instances start at once.
 */
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, migrate } from '../../../io/postgres-schema.ts';
import { openPostgresStore } from '../../../io/postgres-store.ts';
import { checkRow } from '../../fixtures/check-row.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';
import { testStore } from './store-contract.ts';

describe.skipIf(postgresMissing !== null)('postgres store', () => {
  const pg = usePostgres();

  testStore('postgres', async () => openPostgresStore(await pg.createDatabase()));

  it('migrates once when eight instances start at the same moment', async () => {
    const url = await pg.createDatabase();
    const pools = Array.from({ length: 8 }, () => postgres(url, { max: 1, onnotice: () => {} }));
    try {
      const versions = await Promise.all(pools.map((sql) => migrate(sql)));
      expect(versions).toEqual(Array(8).fill(MIGRATIONS.at(-1)!.version));
      const applied = await pools[0]!`SELECT version FROM schema_migrations ORDER BY version`;
      expect(applied.map((row) => row.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await Promise.all(pools.map((sql) => sql.end()));
    }
  });

  it('indexes receipts and observations queued while a flush runs, in one statement', async () => {
    const store = await openPostgresStore(await pg.createDatabase());
    const url = 'https://a.example/x';
    const row = (id: string) => checkRow(id, url, 'pay', '2026-11-24T10:00:00.000Z');
    try {
      store.indexReceipts([row('sc-bbbbbbbbbbbbbbbbbbbbbbbbba')]);
      // The first flush is in flight: these two make the next batch, receipts and an observation together.
      store.indexReceipts([row('sc-bbbbbbbbbbbbbbbbbbbbbbbbbe')]);
      store.addObservation(url, 'GET', {
        observed_at: '2026-11-24T10:00:00.000Z',
        http_status: 402,
        price_usd: 0.01,
        amount_atomic: '10000',
        network: 'eip155:8453',
        asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        pay_to: '0x1111111111111111111111111111111111111111',
      });
      await store.flush();
      expect((await store.listReceipts({ page: 1, pageSize: 10 })).total).toBe(2);
      expect(await store.observations(url, 'GET')).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('refuses to start on a schema newer than the build knows', async () => {
    const url = await pg.createDatabase();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await migrate(sql);
      await sql`INSERT INTO schema_migrations (version, name) VALUES (9999, 'from the future')`;
      await expect(migrate(sql)).rejects.toThrow(/newer than this build knows/);
    } finally {
      await sql.end();
    }
  });
});
