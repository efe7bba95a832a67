/**
 * The integrator store's contract (`io/integrators/port.ts`), run on every backend: its DuckDB file
 * (`io/integrators/duckdb.ts`) and PostgreSQL (`io/integrators/postgres.ts`, a throwaway cluster; three pools stand
 * for three instances on one database). Integrators, keys and usage here; the invoice half's cases are
 * `invoice-store-contract.ts`, run from here on the same backends. Backend-only behaviour: the DuckDB file folds the
 * journal's uses under a cursor (`hosted-store.test.ts` for the fold itself), PostgreSQL counts them when reserved.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres, { type Sql } from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postgresMeter } from '../../../io/hosted-meter/postgres.ts';
import { openIntegratorStore } from '../../../io/integrators/duckdb.ts';
import { type IntegratorStore, type KeyRow, slotKey, type UsageDelta } from '../../../io/integrators/port.ts';
import { postgresIntegratorStore } from '../../../io/integrators/postgres.ts';
import { migrate } from '../../../io/postgres/schema.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';
import { testInvoiceStore } from './invoice-store-contract.ts';

/** Committed uses of one integrator's month, as the backend counts them (folded from the journal, or reserved). */
type Uses = { integrator: string; month: string; calls: number; endUsers: string[] };

/** One backend opened for one case: handles on the same data, and how uses reach its usage. */
type Opened = {
  stores: IntegratorStore[];
  recordUses(uses: Uses[]): Promise<void>;
  close(): Promise<void>;
};

const AT = '2026-05-02T10:00:00.000Z';
const key = (id: string, integrator: string, createdAt: string): KeyRow => ({
  id,
  integrator,
  secretHash: `hash-of-${id}`,
  label: `label ${id}`,
  state: 'active',
  createdAt,
  changedAt: createdAt,
});

function testIntegratorStore(name: string, open: () => Promise<Opened>): void {
  describe(`integrator store contract: ${name}`, () => {
    let opened: Opened;
    const store = (i = 0) => opened.stores[i % opened.stores.length] as IntegratorStore;
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(async () => {
      await opened.close();
    });

    it('keeps integrators by id with their credit limits, and keys in order with their state changes', async () => {
      await store(0).createIntegrator({ id: 'zeta', name: 'Zeta', creditLimitAtomic: 5n, createdAt: AT });
      await store(1).createIntegrator({
        id: 'acme',
        name: 'Acme Router',
        creditLimitAtomic: 50_000_000_000_000_000_000n,
        createdAt: AT,
      });
      expect(await store(2).integrators()).toEqual([
        { id: 'acme', name: 'Acme Router', creditLimitAtomic: 50_000_000_000_000_000_000n, createdAt: AT },
        { id: 'zeta', name: 'Zeta', creditLimitAtomic: 5n, createdAt: AT },
      ]);
      await store(0).addKey(key('k-z', 'zeta', '2026-05-01T00:00:00.000Z'));
      await store(1).addKey(key('k-b', 'acme', '2026-05-03T00:00:00.000Z'));
      await store(2).addKey(key('k-a', 'acme', '2026-05-03T00:00:00.000Z'));
      await store(0).addKey(key('k-c', 'acme', '2026-05-02T00:00:00.000Z'));
      expect((await store(1).keys()).map((k) => k.id)).toEqual(['k-c', 'k-a', 'k-b', 'k-z']);
      await store(2).setKeyState('k-a', 'suspended', '2026-05-04T00:00:00.000Z');
      const keys = await store(0).keys();
      expect(keys.find((k) => k.id === 'k-a')).toEqual({
        ...key('k-a', 'acme', '2026-05-03T00:00:00.000Z'),
        state: 'suspended',
        changedAt: '2026-05-04T00:00:00.000Z',
      });
      expect(keys.find((k) => k.id === 'k-b')?.state).toBe('active');
    });

    it('reports usage per integrator and month with distinct end users, narrowed by either', async () => {
      await opened.recordUses([
        { integrator: 'acme', month: '2026-04', calls: 5, endUsers: ['eu:a', 'eu:b', 'eu:a'] },
        { integrator: 'acme', month: '2026-05', calls: 2, endUsers: [] },
        { integrator: 'zeta', month: '2026-05', calls: 3, endUsers: ['eu:c'] },
      ]);
      const all = [
        { integrator: 'acme', month: '2026-04', calls: 5, endUsers: 2 },
        { integrator: 'acme', month: '2026-05', calls: 2, endUsers: 0 },
        { integrator: 'zeta', month: '2026-05', calls: 3, endUsers: 1 },
      ];
      expect(await store(1).usage({})).toEqual(all);
      expect(await store(2).usage({ integrator: 'acme' })).toEqual(all.slice(0, 2));
      expect(await store(0).usage({ month: '2026-05' })).toEqual(all.slice(1));
      expect(await store(1).usage({ integrator: 'zeta', month: '2026-04' })).toEqual([]);
      expect((await store(2).endUserHashes('acme', '2026-04')).sort()).toEqual(['eu:a', 'eu:b']);
      expect(await store(0).endUserHashes('acme', '2026-05')).toEqual([]);
    });
  });
  testInvoiceStore(name, async () => {
    const { stores, close } = await open();
    return { stores, close };
  });
}

/** The delta the journal's fold would hand the DuckDB store for `uses` (`io/hosted-meter/usage.ts`). */
function deltaOf(uses: Uses[]): UsageDelta {
  const delta: UsageDelta = { calls: new Map(), endUsers: new Map() };
  for (const use of uses) {
    delta.calls.set(slotKey(use.integrator, use.month), use.calls);
    for (const hash of use.endUsers) {
      const slot = slotKey(use.integrator, use.month, hash);
      delta.endUsers.set(slot, (delta.endUsers.get(slot) ?? 0) + 1);
    }
  }
  return delta;
}

testIntegratorStore('duckdb', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spotcheck-integrators-'));
  const store = await openIntegratorStore(join(dir, 'integrators.duckdb'));
  return {
    stores: [store],
    async recordUses(uses) {
      expect(await store.foldUsage(deltaOf(uses), await store.usageCursor(), '7')).toBe(true);
    },
    async close() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('duckdb: the usage snapshot moves with its journal cursor', () => {
  it('folds only from the cursor it covers, and leaves a stale fold out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spotcheck-integrators-'));
    const store = await openIntegratorStore(join(dir, 'integrators.duckdb'));
    try {
      const uses = [{ integrator: 'acme', month: '2026-05', calls: 2, endUsers: ['eu:a'] }];
      expect(await store.usageCursor()).toBeNull();
      expect(await store.foldUsage(deltaOf(uses), null, '3')).toBe(true);
      expect(await store.usageCursor()).toBe('3');
      expect(await store.foldUsage(deltaOf(uses), null, '4')).toBe(false);
      expect(await store.foldUsage(deltaOf(uses), '3', '5')).toBe(true);
      expect(await store.usage({})).toEqual([
        { integrator: 'acme', month: '2026-05', calls: 4, endUsers: 1 },
      ]);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();

  testIntegratorStore('postgres, three pools', async () => {
    const url = await pg.createDatabase();
    const sqls = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(sqls[0] as Sql);
    return {
      stores: sqls.map((sql) => postgresIntegratorStore(sql)),
      async recordUses(uses) {
        // Usage is counted when a call reserves it; the meter's restore stands for the reservations.
        const meter = postgresMeter(sqls[0] as Sql, () => new Date(AT));
        for (const use of uses) await meter.restore(use.month, use.integrator, use.calls, use.endUsers);
      },
      close: async () => {
        await Promise.all(sqls.map((sql) => sql.end()));
      },
    };
  });

  it('has no journal to fold: no cursor, and a fold is refused', async () => {
    const url = await pg.createDatabase();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await migrate(sql);
      const store = postgresIntegratorStore(sql);
      expect(await store.usageCursor()).toBeNull();
      await expect(store.foldUsage({ calls: new Map(), endUsers: new Map() }, null, '1')).rejects.toThrow(
        /no journal to fold/,
      );
    } finally {
      await sql.end();
    }
  });
});
