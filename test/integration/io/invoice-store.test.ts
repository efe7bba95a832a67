/**
 * Invoices on each integrator store beyond the contract (`integrators.contract.test.ts` runs
 * `invoice-store-contract.ts` on both): invoices stored before pay tokens
 * (each store gives them a random token when it opens, DuckDB, or migrates, PostgreSQL, and keeps their signed body
 * as it was); and on PostgreSQL, where usage is counted when reserved, a late use billed on the next invoice (the
 * journal's twin is in `hosted-store.test.ts`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { isPayToken } from '../../../core/invoice.ts';
import { openIntegratorStore } from '../../../io/integrators/duckdb.ts';
import { issueInvoices } from '../../../io/integrators/invoices.ts';
import { postgresIntegratorStore } from '../../../io/integrators/postgres.ts';
import { loadSigningKeys } from '../../../io/keys.ts';
import { MIGRATIONS, migrate } from '../../../io/postgres/schema.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

const LEGACY_BODY = { id: 'inv-202601-old', pay_url: 'https://s.example/v1/invoices/inv-202601-old/pay' };

describe('duckdb: invoices stored before pay tokens', () => {
  it('get a random token when the store opens; their signed body is kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spotcheck-invoice-legacy-'));
    const path = join(dir, 'integrators.duckdb');
    try {
      const instance = await DuckDBInstance.create(path);
      const db = await instance.connect();
      await db.run(`CREATE TABLE invoices (
        id VARCHAR PRIMARY KEY, integrator VARCHAR NOT NULL, month VARCHAR NOT NULL, total_atomic VARCHAR NOT NULL,
        body VARCHAR NOT NULL, status VARCHAR NOT NULL, tx VARCHAR, paid_at VARCHAR)`);
      await db.run(
        `INSERT INTO invoices VALUES ('inv-202601-old', 'old', '2026-01', '40000', '${JSON.stringify(LEGACY_BODY)}', 'open', NULL, NULL),
         ('inv-202601-two', 'two', '2026-01', '40000', '{}', 'paid', '0xabc', '2026-02-02T00:00:00Z')`,
      );
      db.closeSync();
      instance.closeSync();

      const store = await openIntegratorStore(path);
      const [old, two] = [await store.invoice('inv-202601-old'), await store.invoice('inv-202601-two')];
      expect(old).toMatchObject({ status: 'open', body: LEGACY_BODY, claim: null });
      expect(two).toMatchObject({ status: 'paid', tx: '0xabc' });
      expect(isPayToken(old?.payToken)).toBe(true);
      expect(isPayToken(two?.payToken)).toBe(true);
      expect(old?.payToken).not.toBe(two?.payToken);
      await store.close();
      // Opening again keeps the tokens.
      const again = await openIntegratorStore(path);
      expect((await again.invoice('inv-202601-old'))?.payToken).toBe(old?.payToken);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();

  it('bills a use committed after its month was invoiced on the next invoice, once', async () => {
    const url = await pg.createDatabase();
    const sql = postgres(url, { max: 2, onnotice: () => {} });
    const dir = await mkdtemp(join(tmpdir(), 'spotcheck-invoice-late-'));
    try {
      await migrate(sql);
      const store = postgresIntegratorStore(sql);
      const keys = await loadSigningKeys({ dir: join(dir, 'keys') });
      const issue = (month: string, now: string) =>
        issueInvoices({
          store,
          tail: async () => {},
          month,
          now: new Date(now),
          signer: keys.signer,
          dir: join(dir, 'invoices'),
          payTo: '0x2222222222222222222222222222222222222222',
          baseUrl: 'https://spotcheck.example',
          random: (n) => crypto.getRandomValues(new Uint8Array(n)),
        });
      await sql`INSERT INTO hosted_usage (integrator, month, calls) VALUES ('acme', '2026-04', 1001)`;
      expect((await issue('2026-04', '2026-05-01T00:00:01Z')).map((r) => r.total_atomic)).toEqual(['20000']);
      // A reservation of April that committed after April's run read the usage.
      await sql`UPDATE hosted_usage SET calls = calls + 1 WHERE integrator = 'acme' AND month = '2026-04'`;
      expect(await issue('2026-05', '2026-06-01T00:00:01Z')).toEqual([
        { id: 'inv-202605-acme', integrator: 'acme', total_atomic: '20000', created: true },
      ]);
      expect((await store.invoice('inv-202605-acme'))?.body).toMatchObject({
        calls: 0,
        earlier_months: [{ month: '2026-04', calls: 1, amount_atomic: '20000' }],
      });
      expect(await issue('2026-06', '2026-07-01T00:00:01Z')).toEqual([]);
    } finally {
      await sql.end();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives invoices stored before pay tokens a random token in the migration', async () => {
    const url = await pg.createDatabase();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`CREATE TABLE schema_migrations (
          version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
        for (const migration of MIGRATIONS.filter((m) => m.version <= 4)) {
          await tx.unsafe(migration.sql);
          await tx`INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`;
        }
        for (const id of ['inv-202601-old', 'inv-202601-two'])
          await tx`INSERT INTO invoices (id, integrator, month, total_atomic, body, status)
            VALUES (${id}, 'old', '2026-01', '40000', ${JSON.stringify(LEGACY_BODY)}, 'open')`;
      });
      await migrate(sql);
      const store = postgresIntegratorStore(sql);
      const [old, two] = [await store.invoice('inv-202601-old'), await store.invoice('inv-202601-two')];
      expect(old).toMatchObject({ status: 'open', body: LEGACY_BODY, claim: null });
      expect(isPayToken(old?.payToken)).toBe(true);
      expect(isPayToken(two?.payToken)).toBe(true);
      expect(old?.payToken).not.toBe(two?.payToken);
    } finally {
      await sql.end();
    }
  });
});
