/**
 * The hosted rate limit's contract (`io/rate-limit/port.ts`: 120 calls a minute per key, with the IETF RateLimit
 * fields), run on every backend: in memory (`io/rate-limit/memory.ts`) and in PostgreSQL (`io/rate-limit/postgres.ts`,
 * a throwaway cluster; three pools stand for three instances on one database, and the window must be exact across
 * them). On memory the three instances are one process's limiter.
 */
import postgres, { type Sql } from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../../io/postgres/schema.ts';
import { createRateLimiter, ratePort } from '../../../io/rate-limit/memory.ts';
import type { RatePort } from '../../../io/rate-limit/port.ts';
import { postgresRateLimiter } from '../../../io/rate-limit/postgres.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

type Window = { limit: number; windowSeconds: number; now: () => number };
/** One backend opened for one case: three handles on the same windows. */
type Opened = { instances: RatePort[]; close(): Promise<void> };

function testRateLimit(name: string, open: (window: Window) => Promise<Opened>): void {
  describe(`rate limit contract: ${name}`, () => {
    let opened: Opened | null = null;
    afterEach(async () => {
      await opened?.close();
      opened = null;
    });
    /** Opens the backend with `limit` calls a minute on the clock `now`; `take(i, key)` goes to instance `i`. */
    const limiter = async (limit: number, now: () => number) => {
      opened = await open({ limit, windowSeconds: 60, now });
      const instances = opened.instances;
      return (i: number, key: string) => (instances[i % instances.length] as RatePort).take(key);
    };

    it('allows 120 calls in a minute, refuses the 121st with Retry-After, and frees units as the window slides', async () => {
      let now = 1_000_000;
      const take = await limiter(120, () => now);
      expect(await take(0, 'k1')).toEqual({
        allowed: true,
        headers: { 'ratelimit-policy': '"hosted";q=120;w=60', ratelimit: '"hosted";r=119;t=60' },
      });
      now += 30_000;
      for (let i = 0; i < 119; i++) expect((await take(i, 'k1')).allowed).toBe(true);
      expect(await take(1, 'k1')).toEqual({
        allowed: false,
        headers: {
          'ratelimit-policy': '"hosted";q=120;w=60',
          ratelimit: '"hosted";r=0;t=30',
          'retry-after': '30',
        },
      });
      // Another key has its own window.
      expect((await take(2, 'k2')).allowed).toBe(true);
      // The first call leaves the window at +60 s: one unit frees, the next refusal waits for the other 119.
      now += 30_000;
      expect((await take(0, 'k1')).headers.ratelimit).toBe('"hosted";r=0;t=30');
      expect(await take(1, 'k1')).toMatchObject({ allowed: false, headers: { 'retry-after': '30' } });
    });

    it('never counts a refused call', async () => {
      let now = 0;
      const take = await limiter(2, () => now);
      await take(0, 'k');
      await take(1, 'k');
      for (let i = 0; i < 10; i++) expect((await take(i, 'k')).allowed).toBe(false);
      now = 60_001;
      expect((await take(0, 'k')).allowed).toBe(true);
      expect((await take(1, 'k')).allowed).toBe(true);
      expect((await take(2, 'k')).allowed).toBe(false);
    });

    it('allows exactly 120 of 150 parallel calls spread over three instances', async () => {
      let now = Date.parse('2026-11-24T10:00:00.000Z');
      const take = await limiter(120, () => now);
      const decisions = await Promise.all(Array.from({ length: 150 }, (_, i) => take(i, 'key1')));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(120);
      const refused = decisions.find((d) => !d.allowed);
      expect(refused?.headers).toMatchObject({ ratelimit: '"hosted";r=0;t=60', 'retry-after': '60' });
      expect((await take(1, 'key2')).allowed).toBe(true);
      now += 60_001;
      expect((await take(2, 'key1')).allowed).toBe(true);
    });
  });
}

testRateLimit('memory', async (window) => {
  const port = ratePort(createRateLimiter(window));
  return { instances: [port, port, port], close: async () => {} };
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();

  testRateLimit('postgres, three pools', async (window) => {
    const url = await pg.createDatabase();
    const sqls = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(sqls[0] as Sql);
    return {
      instances: sqls.map((sql) => postgresRateLimiter(sql, window)),
      close: async () => {
        await Promise.all(sqls.map((sql) => sql.end()));
      },
    };
  });
});
