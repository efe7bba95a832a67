/**
 * Free quota, replay guard, hosted usage and rate limit shared through PostgreSQL: three pools stand
 * for three instances on one database, and the counts must be exact across them, not per pool.
 */
import postgres, { type Sql } from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { QuotaKey } from '../../../core/quota.ts';
import { postgresMeter, postgresRateLimiter } from '../../../io/hosted-meter/postgres.ts';
import { migrate } from '../../../io/postgres/schema.ts';
import { openPostgresQuota } from '../../../io/quota/postgres.ts';
import { openPostgresReplayGuard } from '../../../io/replay/postgres.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

describe.skipIf(postgresMissing !== null)('shared state in postgres', () => {
  let pg: TestPostgres;
  let pools: Sql[] = [];
  let clock = new Date('2026-11-24T10:00:00.000Z');
  const now = () => clock;

  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });
  beforeEach(async () => {
    await Promise.all(pools.map((sql) => sql.end()));
    const url = await pg.createDatabase();
    pools = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(pools[0]!);
    clock = new Date('2026-11-24T10:00:00.000Z');
  });
  afterAll(async () => {
    await Promise.all(pools.map((sql) => sql.end()));
  });

  /** Units used today of one quota key, as any instance reads them. */
  const used = async (bucket: string, id: string) => {
    const [row] = await pools[2]!<Array<{ used: number }>>`SELECT used FROM quota_use
      WHERE day = '2026-11-24' AND bucket = ${bucket} AND id = ${id}`;
    return row?.used ?? 0;
  };

  const keys = (address: string): QuotaKey[] => [
    { bucket: 'check', id: `ip:${address}`, limit: 5 },
    { bucket: 'check_net', id: 'net:10.0.0', limit: 25 },
  ];

  it('grants exactly 5 of 100 parallel reservations spread over three instances', async () => {
    const quotas = await Promise.all(pools.map((sql) => openPostgresQuota(sql, now, 'salt-check-1')));
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => quotas[i % 3]!.reserve(keys('10.0.0.1'))),
    );
    const granted = results.filter((r) => r.ok);
    expect(granted).toHaveLength(5);
    expect(granted.map((r) => (r.ok ? r.reservation.used : 0)).sort()).toEqual([1, 2, 3, 4, 5]);
    const refused = results.find((r) => !r.ok);
    expect(refused).toMatchObject({ ok: false, exhausted: { bucket: 'check' }, used: 5 });
    expect(await used('check_net', 'net:10.0.0')).toBe(5);
  });

  it('holds the network ceiling across addresses and instances, taking none of a refused call', async () => {
    const quotas = await Promise.all(pools.map((sql) => openPostgresQuota(sql, now, 'salt-check-1')));
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => quotas[i % 3]!.reserve(keys(`10.0.0.${i % 12}`))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(25);
    // A refusal by the network ceiling rolled back the address unit it had taken first.
    const perAddress = await Promise.all(
      Array.from({ length: 12 }, (_, i) => used('check', `ip:10.0.0.${i}`)),
    );
    expect(perAddress.reduce((a, b) => a + b, 0)).toBe(25);
  });

  it('gives a released unit back to every instance, and counts a new UTC day afresh', async () => {
    const [a, b] = await Promise.all(
      pools.slice(0, 2).map((sql) => openPostgresQuota(sql, now, 'salt-check-1')),
    );
    const taken = [];
    for (let i = 0; i < 5; i += 1) taken.push(await a!.reserve(keys('10.0.0.9')));
    expect((await b!.reserve(keys('10.0.0.9'))).ok).toBe(false);
    const first = taken[0]!;
    if (!first.ok) throw new Error('expected a reservation');
    await first.reservation.release();
    await first.reservation.release();
    expect(await used('check', 'ip:10.0.0.9')).toBe(4);
    expect((await b!.reserve(keys('10.0.0.9'))).ok).toBe(true);
    expect((await b!.reserve(keys('10.0.0.9'))).ok).toBe(false);
    clock = new Date('2026-11-25T00:00:01.000Z');
    expect((await a!.reserve(keys('10.0.0.9'))).ok).toBe(true);
  });

  it('numbers hosted calls exactly across instances: bands past 1,000, and the credit limit', async () => {
    const meters = pools.map((sql) => postgresMeter(sql, now));
    await meters[0]!.restore('2026-11', 'acme', 990, []);
    // Credit for 1,000 free calls and 5 standard ones (5 × 20000 atomic).
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => meters[i % 3]!.reserve('acme', 100_000n, `eu:${i % 4}`)),
    );
    const uses = results.flatMap((r) => (r.ok ? [r.use] : []));
    expect(uses.map((use) => use.n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 15 }, (_, i) => 991 + i),
    );
    expect(uses.filter((use) => use.band === 'standard')).toHaveLength(5);
    expect(results.find((r) => !r.ok)).toMatchObject({ reason: 'credit_limit', dueAtomic: 100_000n });
    expect(await meters[1]!.calls('acme', '2026-11')).toBe(1005);
    expect(await meters[2]!.endUsers('acme', '2026-11')).toBe(new Set(uses.map((use) => use.endUser)).size);
    // A use given back frees its number for the next call, on any instance.
    await uses.find((use) => use.n === 1005)!.release();
    const again = await meters[2]!.reserve('acme', 100_000n, null);
    expect(again).toMatchObject({ ok: true, use: { n: 1005, band: 'standard' } });
    expect(await meters[0]!.months('acme')).toEqual(['2026-11']);
  });

  it('limits a key to 120 calls a minute across instances, with the RateLimit fields', async () => {
    let ms = clock.getTime();
    const limiters = pools.map((sql) =>
      postgresRateLimiter(sql, { limit: 120, windowSeconds: 60, now: () => ms }),
    );
    const decisions = await Promise.all(Array.from({ length: 150 }, (_, i) => limiters[i % 3]!.take('key1')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(120);
    const refused = decisions.find((d) => !d.allowed);
    expect(refused?.headers).toMatchObject({ ratelimit: '"hosted";r=0;t=60', 'retry-after': '60' });
    expect((await limiters[1]!.take('key2')).allowed).toBe(true);
    ms += 60_001;
    expect((await limiters[2]!.take('key1')).allowed).toBe(true);
  });

  it('refuses to open beside instances whose quota salt differs', async () => {
    await openPostgresQuota(pools[0]!, now, 'salt-check-1');
    await expect(openPostgresQuota(pools[1]!, now, 'salt-check-2')).rejects.toThrow(/quota-salt differs/);
    await expect(openPostgresQuota(pools[2]!, now, 'salt-check-1')).resolves.toBeDefined();
  });

  it('lets exactly one of concurrent claims of one payment win, on any instance', async () => {
    const guards = await Promise.all(pools.map((sql) => openPostgresReplayGuard(sql, now)));
    const hold = { validBefore: Math.floor(clock.getTime() / 1000) + 300, fallbackSeconds: 300 };
    const claims = await Promise.all(
      Array.from({ length: 30 }, (_, i) => guards[i % 3]!.claim('0xabc:0x01', hold)),
    );
    expect(claims.filter((c) => c === null)).toHaveLength(1);
    expect(new Set(claims.filter((c) => c !== null))).toEqual(new Set(['payment_in_flight']));
  });

  it('refuses a settled payment on another instance until it expires, and frees an unsettled one', async () => {
    const [a, b] = await Promise.all(pools.slice(0, 2).map((sql) => openPostgresReplayGuard(sql, now)));
    const at = Math.floor(clock.getTime() / 1000);
    const hold = { validBefore: at + 120, fallbackSeconds: 300 };
    expect(await a!.claim('0xabc:0x02', hold)).toBeNull();
    await a!.release('0xabc:0x02', { ...hold, reason: 'payment_already_used' });
    expect(await b!.claim('0xabc:0x02', hold)).toBe('payment_already_used');
    clock = new Date(clock.getTime() + 121_000);
    expect(await b!.claim('0xabc:0x02', hold)).toBeNull();

    expect(await a!.claim('0xabc:0x03', hold)).toBeNull();
    await a!.release('0xabc:0x03', null);
    expect(await b!.claim('0xabc:0x03', hold)).toBeNull();
  });

  it('keeps the claim of an instance that died mid-flight until the payment window ends', async () => {
    const [a, b] = await Promise.all(pools.slice(0, 2).map((sql) => openPostgresReplayGuard(sql, now)));
    const at = Math.floor(clock.getTime() / 1000);
    expect(await a!.claim('0xabc:0x04', { validBefore: at + 60, fallbackSeconds: 300 })).toBeNull();
    // Instance a never releases (SIGKILL): b refuses the payload while its signature is valid.
    clock = new Date(clock.getTime() + 59_000);
    expect(await b!.claim('0xabc:0x04', { validBefore: at + 60, fallbackSeconds: 300 })).toBe(
      'payment_in_flight',
    );
    clock = new Date(clock.getTime() + 2_000);
    expect(await b!.claim('0xabc:0x04', { validBefore: at + 60, fallbackSeconds: 300 })).toBeNull();
  });
});
