/**
 * The seller's replay guard's contract (`io/replay/port.ts`), run on every backend: in memory
 * (`io/replay/memory.ts`) and in PostgreSQL (`io/replay/postgres.ts`, a throwaway cluster; three pools stand for
 * three instances on one database). On memory the three instances are one process's guard.
 */
import postgres, { type Sql } from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../../io/postgres/schema.ts';
import { createReplayGuard } from '../../../io/replay/memory.ts';
import type { ReplayGuard } from '../../../io/replay/port.ts';
import { openPostgresReplayGuard } from '../../../io/replay/postgres.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

/** One backend opened for one case: three handles on the same claims. */
type Opened = { instances: ReplayGuard[]; close(): Promise<void> };

const START = new Date('2026-11-24T10:00:00.000Z');

function testReplayGuard(name: string, open: (now: () => Date) => Promise<Opened>): void {
  describe(`replay guard contract: ${name}`, () => {
    let clock = START;
    let opened: Opened;
    const guard = (i: number) => opened.instances[i % opened.instances.length] as ReplayGuard;
    const at = () => Math.floor(clock.getTime() / 1000);
    beforeEach(async () => {
      clock = START;
      opened = await open(() => clock);
    });
    afterEach(async () => {
      await opened.close();
    });

    it('lets exactly one of concurrent claims of one payment win, on any instance', async () => {
      const hold = { validBefore: at() + 300, fallbackSeconds: 300 };
      const claims = await Promise.all(
        Array.from({ length: 30 }, (_, i) => guard(i).claim('0xabc:0x01', hold)),
      );
      expect(claims.filter((c) => c === null)).toHaveLength(1);
      expect(new Set(claims.filter((c) => c !== null))).toEqual(new Set(['payment_in_flight']));
    });

    it('refuses a settled payment on another instance until it expires, and frees an unsettled one', async () => {
      const hold = { validBefore: at() + 120, fallbackSeconds: 300 };
      expect(await guard(0).claim('0xabc:0x02', hold)).toBeNull();
      await guard(0).release('0xabc:0x02', { ...hold, reason: 'payment_already_used' });
      expect(await guard(1).claim('0xabc:0x02', hold)).toBe('payment_already_used');
      clock = new Date(clock.getTime() + 121_000);
      expect(await guard(1).claim('0xabc:0x02', hold)).toBeNull();

      expect(await guard(0).claim('0xabc:0x03', hold)).toBeNull();
      await guard(0).release('0xabc:0x03', null);
      expect(await guard(1).claim('0xabc:0x03', hold)).toBeNull();
    });

    it('holds a pending settlement for the fallback window when the authorization names no end', async () => {
      const hold = { validBefore: null, fallbackSeconds: 60 };
      expect(await guard(0).claim('0xabc:0x05', hold)).toBeNull();
      await guard(0).release('0xabc:0x05', { ...hold, reason: 'settlement_pending' });
      clock = new Date(clock.getTime() + 59_000);
      expect(await guard(2).claim('0xabc:0x05', hold)).toBe('settlement_pending');
      clock = new Date(clock.getTime() + 2_000);
      expect(await guard(2).claim('0xabc:0x05', hold)).toBeNull();
    });
  });
}

testReplayGuard('memory', async (now) => {
  const guard = createReplayGuard(now);
  return { instances: [guard, guard, guard], close: async () => {} };
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();
  let clock = START;
  const now = () => clock;
  let sqls: Sql[] = [];
  const open = async (): Promise<ReplayGuard[]> => {
    const url = await pg.createDatabase();
    sqls = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(sqls[0] as Sql);
    return Promise.all(sqls.map((sql) => openPostgresReplayGuard(sql, now)));
  };
  const close = async () => {
    await Promise.all(sqls.map((sql) => sql.end()));
  };

  testReplayGuard('postgres, three pools', async (contractNow) => {
    const url = await pg.createDatabase();
    const pools = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(pools[0] as Sql);
    return {
      instances: await Promise.all(pools.map((sql) => openPostgresReplayGuard(sql, contractNow))),
      close: async () => {
        await Promise.all(pools.map((sql) => sql.end()));
      },
    };
  });

  // Only a shared guard outlives an instance: one in memory dies with its process.
  it('keeps the claim of an instance that died mid-flight until the payment window ends', async () => {
    clock = START;
    const [a, b] = await open();
    try {
      const at = Math.floor(clock.getTime() / 1000);
      expect(await a?.claim('0xabc:0x04', { validBefore: at + 60, fallbackSeconds: 300 })).toBeNull();
      // Instance a never releases (SIGKILL): b refuses the payload while its signature is valid.
      clock = new Date(clock.getTime() + 59_000);
      expect(await b?.claim('0xabc:0x04', { validBefore: at + 60, fallbackSeconds: 300 })).toBe(
        'payment_in_flight',
      );
      clock = new Date(clock.getTime() + 2_000);
      expect(await b?.claim('0xabc:0x04', { validBefore: at + 60, fallbackSeconds: 300 })).toBeNull();
    } finally {
      await close();
    }
  });
});
