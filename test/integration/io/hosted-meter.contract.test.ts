/**
 * The hosted usage meter's contract (`io/hosted-meter/port.ts`), run on every backend: in memory
 * (`io/hosted-meter/memory.ts`) and in PostgreSQL (`io/hosted-meter/postgres.ts`, a throwaway cluster; three pools
 * stand for three instances on one database, and call numbers must be exact across them). On memory the three
 * instances are one process's meter. Bands and prices: docs/api.md §5.4 (1-1,000 free, then 20000, from 2,001 10000).
 */
import postgres, { type Sql } from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHostedMeter, meterPort } from '../../../io/hosted-meter/memory.ts';
import type { MeterPort } from '../../../io/hosted-meter/port.ts';
import { postgresMeter } from '../../../io/hosted-meter/postgres.ts';
import { migrate } from '../../../io/postgres/schema.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

/** One backend opened for one case: three handles on the same usage. */
type Opened = { instances: MeterPort[]; close(): Promise<void> };

function testMeter(name: string, open: (now: () => Date) => Promise<Opened>): void {
  describe(`hosted meter contract: ${name}`, () => {
    let clock = new Date('2026-05-10T00:00:00Z');
    let opened: Opened;
    const meter = (i = 0) => opened.instances[i % opened.instances.length] as MeterPort;
    beforeEach(async () => {
      clock = new Date('2026-05-10T00:00:00Z');
      opened = await open(() => clock);
    });
    afterEach(async () => {
      await opened.close();
    });

    it('gives consecutive call numbers to calls reserved back to back, and bands from them', async () => {
      await meter().restore('2026-05', 'acme', 998, []);
      const uses = [];
      for (let i = 0; i < 4; i += 1) uses.push(await meter(i).reserve('acme', 10n ** 12n, null));
      expect(uses.map((u) => (u.ok ? [u.use.n, u.use.band, u.use.priceAtomic] : null))).toEqual([
        [999, 'free_allowance', 0n],
        [1000, 'free_allowance', 0n],
        [1001, 'standard', 20000n],
        [1002, 'standard', 20000n],
      ]);
      expect(uses[0]).toMatchObject({
        ok: true,
        use: { integrator: 'acme', month: '2026-05', endUser: null },
      });
      expect(await meter(1).calls('acme', '2026-05')).toBe(1002);
      expect(await meter(2).calls('other', '2026-05')).toBe(0);
    });

    it('refuses the call whose price would pass the credit limit, and gives a released call back once', async () => {
      await meter().restore('2026-05', 'acme', 1000, []);
      // Limit 0.04 USDC: calls 1,001 and 1,002 fit, 1,003 does not.
      const first = await meter(0).reserve('acme', 40000n, null);
      const second = await meter(1).reserve('acme', 40000n, null);
      const third = await meter(2).reserve('acme', 40000n, null);
      expect(first.ok && second.ok).toBe(true);
      expect(third).toEqual({
        ok: false,
        reason: 'credit_limit',
        dueAtomic: 40000n,
        creditLimitAtomic: 40000n,
      });
      if (!second.ok) throw new Error('expected a use');
      await second.use.release();
      await second.use.release();
      expect(await meter(2).calls('acme', '2026-05')).toBe(1001);
      expect(await meter(0).reserve('acme', 40000n, null)).toMatchObject({ ok: true, use: { n: 1002 } });
      // Inside the free allowance a zero limit refuses nothing.
      expect((await meter(1).reserve('fresh', 0n, null)).ok).toBe(true);
    });

    it('counts distinct end users, gives a released one back, and starts every month at zero', async () => {
      clock = new Date('2026-05-31T23:59:59Z');
      await meter(0).reserve('acme', 0n, 'eu:a');
      await meter(1).reserve('acme', 0n, 'eu:a');
      const b = await meter(2).reserve('acme', 0n, 'eu:b');
      expect(await meter(0).endUsers('acme', '2026-05')).toBe(2);
      if (!b.ok) throw new Error('expected a use');
      await b.use.release();
      expect(await meter(1).endUsers('acme', '2026-05')).toBe(1);
      clock = new Date('2026-06-01T00:00:00Z');
      const june = await meter(2).reserve('acme', 0n, null);
      expect(june.ok && june.use).toMatchObject({ month: '2026-06', n: 1 });
      expect(await meter(0).months('acme')).toEqual(['2026-05', '2026-06']);
      expect(await meter(0).months('nobody')).toEqual([]);
    });

    it('numbers parallel calls exactly across instances: bands past 1,000, and the credit limit', async () => {
      clock = new Date('2026-11-24T10:00:00.000Z');
      await meter().restore('2026-11', 'acme', 990, []);
      // Credit for 1,000 free calls and 5 standard ones (5 × 20000 atomic).
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => meter(i).reserve('acme', 100_000n, `eu:${i % 4}`)),
      );
      const uses = results.flatMap((r) => (r.ok ? [r.use] : []));
      expect(uses.map((use) => use.n).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 15 }, (_, i) => 991 + i),
      );
      expect(uses.filter((use) => use.band === 'standard')).toHaveLength(5);
      expect(results.find((r) => !r.ok)).toMatchObject({ reason: 'credit_limit', dueAtomic: 100_000n });
      expect(await meter(1).calls('acme', '2026-11')).toBe(1005);
      expect(await meter(2).endUsers('acme', '2026-11')).toBe(new Set(uses.map((use) => use.endUser)).size);
      // A use given back frees its number for the next call, on any instance.
      await uses.find((use) => use.n === 1005)?.release();
      const again = await meter(2).reserve('acme', 100_000n, null);
      expect(again).toMatchObject({ ok: true, use: { n: 1005, band: 'standard' } });
      expect(await meter(0).months('acme')).toEqual(['2026-11']);
    });

    it('adds restored uses to what is counted, end users included', async () => {
      await meter(0).reserve('acme', 0n, 'eu:a');
      await meter(1).restore('2026-05', 'acme', 3, ['eu:a', 'eu:c']);
      expect(await meter(2).calls('acme', '2026-05')).toBe(4);
      expect(await meter(2).endUsers('acme', '2026-05')).toBe(2);
    });
  });
}

testMeter('memory', async (now) => {
  const port = meterPort(createHostedMeter({ now }));
  return { instances: [port, port, port], close: async () => {} };
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();

  testMeter('postgres, three pools', async (now) => {
    const url = await pg.createDatabase();
    const sqls = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(sqls[0] as Sql);
    return {
      instances: sqls.map((sql) => postgresMeter(sql, now)),
      close: async () => {
        await Promise.all(sqls.map((sql) => sql.end()));
      },
    };
  });
});
