/**
 * The free quota's contract (`io/quota/port.ts`), run on every backend: in memory (`io/quota/memory.ts`) and in
 * PostgreSQL (`io/quota/postgres.ts`, a throwaway cluster; three pools stand for three instances on one database,
 * and the counts must be exact across them, not per pool). On memory the three instances are one process's quota.
 */
import postgres, { type Sql } from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { QuotaKey } from '../../../core/quota.ts';
import { migrate } from '../../../io/postgres/schema.ts';
import { createQuota, quotaPort } from '../../../io/quota/memory.ts';
import type { QuotaPort } from '../../../io/quota/port.ts';
import { openPostgresQuota } from '../../../io/quota/postgres.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

/** One backend opened for one case: three handles on the same counters, and how many units a key used today. */
type Opened = {
  instances: QuotaPort[];
  used(bucket: string, id: string): Promise<number>;
  close(): Promise<void>;
};

const keys = (address: string): QuotaKey[] => [
  { bucket: 'check', id: `ip:${address}`, limit: 5 },
  { bucket: 'check_net', id: 'net:10.0.0', limit: 25 },
];

function testQuota(name: string, open: (now: () => Date) => Promise<Opened>): void {
  describe(`quota contract: ${name}`, () => {
    let clock = new Date('2026-11-24T10:00:00.000Z');
    let opened: Opened;
    const instance = (i: number) => opened.instances[i % opened.instances.length] as QuotaPort;
    beforeEach(async () => {
      clock = new Date('2026-11-24T10:00:00.000Z');
      opened = await open(() => clock);
    });
    afterEach(async () => {
      await opened.close();
    });

    it('grants exactly 5 of 100 parallel reservations spread over three instances', async () => {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => instance(i).reserve(keys('10.0.0.1'))),
      );
      const granted = results.filter((r) => r.ok);
      expect(granted).toHaveLength(5);
      expect(granted.map((r) => (r.ok ? r.reservation.used : 0)).sort()).toEqual([1, 2, 3, 4, 5]);
      expect(granted[0]).toMatchObject({ reservation: { day: '2026-11-24' } });
      const refused = results.find((r) => !r.ok);
      expect(refused).toMatchObject({ ok: false, exhausted: { bucket: 'check' }, used: 5 });
      expect(await opened.used('check_net', 'net:10.0.0')).toBe(5);
    });

    it('holds the network ceiling across addresses and instances, taking none of a refused call', async () => {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => instance(i).reserve(keys(`10.0.0.${i % 12}`))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(25);
      expect(results.find((r) => !r.ok)).toMatchObject({ exhausted: { bucket: 'check_net' }, used: 25 });
      // A refusal by the network ceiling took no address unit.
      const perAddress = await Promise.all(
        Array.from({ length: 12 }, (_, i) => opened.used('check', `ip:10.0.0.${i}`)),
      );
      expect(perAddress.reduce((a, b) => a + b, 0)).toBe(25);
    });

    it('gives a released unit back to every instance once, and counts a new UTC day afresh', async () => {
      const taken = [];
      for (let i = 0; i < 5; i += 1) taken.push(await instance(0).reserve(keys('10.0.0.9')));
      expect((await instance(1).reserve(keys('10.0.0.9'))).ok).toBe(false);
      const first = taken[0];
      if (!first?.ok) throw new Error('expected a reservation');
      await first.reservation.release();
      await first.reservation.release();
      expect(await opened.used('check', 'ip:10.0.0.9')).toBe(4);
      expect((await instance(1).reserve(keys('10.0.0.9'))).ok).toBe(true);
      expect((await instance(1).reserve(keys('10.0.0.9'))).ok).toBe(false);
      clock = new Date('2026-11-25T00:00:01.000Z');
      const tomorrow = await instance(0).reserve(keys('10.0.0.9'));
      expect(tomorrow).toMatchObject({ ok: true, reservation: { day: '2026-11-25', used: 1 } });
    });

    it("gives nothing back to today's count for a unit reserved yesterday", async () => {
      const yesterday = await instance(0).reserve(keys('10.0.0.7'));
      clock = new Date('2026-11-25T00:00:01.000Z');
      await instance(1).reserve(keys('10.0.0.7'));
      if (!yesterday.ok) throw new Error('expected a reservation');
      await yesterday.reservation.release();
      expect(await opened.used('check', 'ip:10.0.0.7')).toBe(1);
    });
  });
}

testQuota('memory', async (now) => {
  const quota = createQuota({ now });
  const port = quotaPort(quota);
  return {
    instances: [port, port, port],
    used: async (bucket, id) => quota.used(bucket, id),
    close: async () => {},
  };
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();

  /** Three pools on a fresh migrated database. */
  const pools = async (): Promise<Sql[]> => {
    const url = await pg.createDatabase();
    const made = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(made[0] as Sql);
    return made;
  };

  testQuota('postgres, three pools', async (now) => {
    const sqls = await pools();
    const instances = await Promise.all(sqls.map((sql) => openPostgresQuota(sql, now, 'salt-check-1')));
    return {
      instances,
      async used(bucket, id) {
        const [row] = await (sqls[2] as Sql)<Array<{ used: number }>>`SELECT used FROM quota_use
          WHERE day = ${now().toISOString().slice(0, 10)} AND bucket = ${bucket} AND id = ${id}`;
        return row?.used ?? 0;
      },
      close: async () => {
        await Promise.all(sqls.map((sql) => sql.end()));
      },
    };
  });

  it('refuses to open beside instances whose quota salt differs', async () => {
    const sqls = await pools();
    const now = () => new Date('2026-11-24T10:00:00.000Z');
    try {
      await openPostgresQuota(sqls[0] as Sql, now, 'salt-check-1');
      await expect(openPostgresQuota(sqls[1] as Sql, now, 'salt-check-2')).rejects.toThrow(
        /quota-salt differs/,
      );
      await expect(openPostgresQuota(sqls[2] as Sql, now, 'salt-check-1')).resolves.toBeDefined();
    } finally {
      await Promise.all(sqls.map((sql) => sql.end()));
    }
  });
});
