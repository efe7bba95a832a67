/**
 * The store contract against a real PostgreSQL (a throwaway cluster, `test/helpers/postgres.ts`), one fresh
 * database per case, and the start-up migrations when several instances start at once.
 */
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { paidCallRecord } from '../../../core/catalog.ts';
import { normalizeUrl } from '../../../core/url.ts';
import { MIGRATIONS, migrate } from '../../../io/postgres/schema.ts';
import { openPostgresStore } from '../../../io/store/postgres.ts';
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

  it('keeps the receipts and listings of a database made before the exact-form index, and answers them by their form', async () => {
    const url = await pg.createDatabase();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const exactForm = MIGRATIONS.find((m) => m.name.startsWith('receipts by the exact URL'));
    // Every migration released before the exact-form one: later ones are applied after it when the store opens.
    const before = MIGRATIONS.filter((m) => m.version < (exactForm?.version ?? 0));
    try {
      await sql`CREATE TABLE schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
      for (const m of before) {
        await sql.unsafe(m.sql);
        await sql`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      }
      const body = (id: string) =>
        JSON.stringify(checkRow(id, 'https://old.example/x', 'pay', '2026-11-01T00:00:00.000Z').body);
      // The seller's own check, then two newer ones of variants it answers 404; and a listed POST endpoint.
      for (const [id, at, requested, method, verdict] of [
        ['sc-plain', '2026-11-01T00:00:00.000Z', 'https://old.example/x', 'GET', 'pay'],
        ['sc-slash', '2026-11-02T00:00:00.000Z', 'https://old.example/x/', 'GET', 'skip'],
        ['sc-post', '2026-11-03T00:00:00.000Z', 'https://old.example/x', 'POST', 'skip'],
        ['sc-listed', '2026-11-04T00:00:00.000Z', 'https://old.example/l/', 'POST', 'skip'],
      ] as const) {
        await sql`INSERT INTO receipts (id, type, issued_at, url, url_norm, host, method, verdict, reason, check_type,
          mode, tier, body, public_state) VALUES (${id}, 'check', ${at}, ${requested},
          ${normalizeUrl(requested)}, 'old.example', ${method}, ${verdict}, 'price_ok', 'dry-run', 'live', 'free',
          ${body(id)}, true)`;
      }
      await sql`INSERT INTO listings (url_norm, method, url, source)
        VALUES ('https://old.example/l', 'POST', 'https://old.example/l/', 'cdp')`;
    } finally {
      await sql.end();
    }
    const store = await openPostgresStore(url);
    try {
      const form = { url: 'https://old.example/x', method: 'GET' } as const;
      expect((await store.latestReceiptByUrl('https://old.example/x', form))?.id).toBe('sc-plain');
      expect((await store.publicChecksByHost('old.example', 10)).map((b) => b.id)).toEqual([
        'sc-listed',
        'sc-plain',
      ]);
      expect(await store.listing('https://old.example/l', 'GET')).toMatchObject({
        method: 'POST',
        source: 'cdp',
      });
    } finally {
      await store.close();
    }
    const check = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [index] = await check`SELECT indexname FROM pg_indexes WHERE indexname = 'receipts_by_form'`;
      expect(index?.indexname).toBe('receipts_by_form');
    } finally {
      await check.end();
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

  describe('paid calls of several instances', () => {
    const call = (url: string, minute: number, receipt: string, knownAnswer: 'pass' | 'fail' = 'pass') =>
      paidCallRecord({
        endpoint_url: url,
        task: 'fx-rate',
        called_at: new Date(Date.UTC(2026, 10, 1, 0, minute)).toISOString(),
        price_atomic: '10000',
        network: 'eip155:8453',
        pay_to: '0x1111111111111111111111111111111111111111',
        settlement_tx: `0x${String(minute).padStart(64, '0')}`,
        delivered: true,
        known_answer: knownAnswer,
        http_status: 200,
        receipt_id: receipt,
      });
    const lookup = { task: 'fx-rate', perService: 20 } as const;

    it("answers another instance's adds in its next lookup, a call added again replacing the one it had", async () => {
      const url = await pg.createDatabase();
      const [a, b] = [await openPostgresStore(url), await openPostgresStore(url)];
      try {
        await a.addPaidCall(call('https://a.example/fx', 1, 'sc-one'));
        expect((await b.paidCalls(lookup)).map((r) => r.receipt_id)).toEqual(['sc-one']);
        await a.addPaidCall(call('https://a.example/fx', 2, 'sc-two'));
        await a.addPaidCall(call('https://a.example/fx', 1, 'sc-one', 'fail'));
        const seen = await b.paidCalls(lookup);
        expect(seen.map((r) => [r.receipt_id, r.known_answer])).toEqual([
          ['sc-two', 'pass'],
          ['sc-one', 'fail'],
        ]);
        // The instance that added answers the same without reading the table again.
        expect(await a.paidCalls(lookup)).toEqual(seen);
        // An add of its own right after one of another instance's does not skip that one.
        await b.addPaidCall(call('https://b.example/fx', 3, 'sc-three'));
        await a.addPaidCall(call('https://c.example/fx', 4, 'sc-four'));
        const ids = (await a.paidCalls(lookup)).map((r) => r.receipt_id);
        expect(ids.sort()).toEqual(['sc-four', 'sc-one', 'sc-three', 'sc-two']);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('numbers concurrent adds of two instances one by one, and a third instance catches up on all of them', async () => {
      const url = await pg.createDatabase();
      const stores = [
        await openPostgresStore(url),
        await openPostgresStore(url),
        await openPostgresStore(url),
      ];
      const [a, b, c] = stores as [(typeof stores)[0], (typeof stores)[0], (typeof stores)[0]];
      try {
        // The third one holds the (empty) table before the adds, so it has to catch up on every one of them.
        expect(await c.paidCalls(lookup)).toEqual([]);
        await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            (i % 2 === 0 ? a : b).addPaidCall(call(`https://s${i}.example/fx`, i, `sc-${i}`)),
          ),
        );
        const sql = postgres(url, { max: 1, onnotice: () => {} });
        try {
          const versions = await sql`SELECT version FROM paid_calls ORDER BY version`;
          expect(versions.map((row) => Number(row.version))).toEqual(
            Array.from({ length: 40 }, (_, i) => i + 1),
          );
        } finally {
          await sql.end();
        }
        expect((await c.paidCalls(lookup)).length).toBe(40);
        expect((await a.paidCalls(lookup)).length).toBe(40);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    });
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
