/**
 * The store contract against a real PostgreSQL (a throwaway cluster, `test/helpers/postgres.ts`), one fresh
 * database per case, and the start-up migrations when several instances start at once.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, migrate } from '../../../io/postgres-schema.ts';
import { openPostgresStore } from '../../../io/postgres-store.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { testStore } from './store-contract.ts';

describe.skipIf(postgresMissing !== null)('postgres store', () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });

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
