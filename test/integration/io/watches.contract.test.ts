/**
 * The watch store's contract (`io/watches/port.ts`), run on every backend: DuckDB in memory and in a file (the
 * embedded default, `io/watches/duckdb.ts`) and PostgreSQL (`io/watches/postgres.ts`, a throwaway cluster; three
 * pools stand for three instances on one database). On DuckDB the three instances are one process's store.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres, { type Sql } from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WatchState } from '../../../core/watch-events.ts';
import { migrate } from '../../../io/postgres/schema.ts';
import { openDuckDbWatchStore } from '../../../io/watches/duckdb.ts';
import type { DueEndpoint, WatchRow, WatchStore } from '../../../io/watches/port.ts';
import { postgresWatchStore } from '../../../io/watches/postgres.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

type Opened = { instances: WatchStore[]; close(): Promise<void> };

const T0 = Date.parse('2026-11-24T10:00:00.000Z');
const DAY = 86_400_000;

function watchRow(id: string, over: Partial<WatchRow> = {}): WatchRow {
  return {
    id,
    tokenHash: `hash-${id}`,
    url: 'https://seller.example/api',
    urlNorm: 'https://seller.example/api',
    method: 'GET',
    payTo: null,
    network: null,
    claimedPrice: null,
    webhookUrl: 'https://hooks.example/in',
    events: ['terms_changed', 'down'],
    owner: { kind: 'paid', tx: '0xabc' },
    createdAt: new Date(T0).toISOString(),
    expiresAtMs: T0 + 30 * DAY,
    status: 'active',
    expiringSent: false,
    ...over,
  };
}

const state: WatchState = {
  verdict: 'pay',
  reason: 'price_ok',
  terms: { amount_atomic: '10000', pay_to: '0x1', network: 'eip155:8453', asset: '0xa' },
  failures: 0,
  down: false,
  receiptId: 'sc-x',
  since: '2026-11-24T10:00:00.000Z',
  lastSeen: '2026-11-24T10:00:00.000Z',
};

function event(id: string, watchId: string, webhookUrl: string | null = 'https://hooks.example/in') {
  return {
    id,
    watchId,
    event: 'terms_changed',
    occurredAt: new Date(T0).toISOString(),
    body: `{"id":"${id}"}`,
    webhookUrl,
  };
}

function testWatchStore(name: string, open: () => Promise<Opened>): void {
  describe(`watch store contract: ${name}`, () => {
    let opened: Opened;
    const store = (i: number) => opened.instances[i % opened.instances.length] as WatchStore;
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(async () => {
      await opened.close();
    });

    it('reads a watch back as stored, lists a hosted owner’s, and schedules its endpoint at once', async () => {
      const hosted = watchRow('wa-1', {
        owner: { kind: 'hosted', integrator: 'int-1', keyId: 'k1' },
        payTo: '0x2',
      });
      await store(0).createWatch(hosted, T0);
      expect(await store(1).watch('wa-1')).toEqual(hosted);
      expect(await store(1).watch('wa-none')).toBeNull();
      expect((await store(2).watchesOfIntegrator('int-1')).map((w) => w.id)).toEqual(['wa-1']);
      expect(await store(2).watchesOfIntegrator('int-2')).toEqual([]);
      const due = await store(0).claimDue(T0, 60_000, 10);
      expect(due).toEqual([{ url: hosted.url, method: 'GET', states: {}, leaseUntil: T0 + 60_000 }]);
    });

    it('leases each due endpoint to exactly one of concurrent claims, until its lease ends or the probe ends', async () => {
      for (let i = 0; i < 12; i++) {
        await store(0).createWatch(watchRow(`wa-${i}`, { url: `https://seller.example/${i}` }), T0);
      }
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => store(i).claimDue(T0, 60_000, 3)));
      const urls = claims.flat().map((d) => d.url);
      expect(urls).toHaveLength(12);
      expect(new Set(urls).size).toBe(12);
      expect(await store(1).claimDue(T0 + 59_000, 60_000, 100)).toEqual([]);
      // An instance that died: its leases end and another takes the work.
      const retaken = await store(2).claimDue(T0 + 60_000, 60_000, 100);
      expect(retaken).toHaveLength(12);
      const zero = retaken.find((d) => d.url === 'https://seller.example/0');
      expect(zero?.leaseUntil).toBe(T0 + 120_000);
      const result = { states: { k: state }, nextDueMs: T0 + 600_000, events: [], nowMs: T0 + 61_000 };
      expect(await store(0).finishProbe(zero as DueEndpoint, result)).toBe(true);
      expect(await store(1).claimDue(T0 + 130_000, 60_000, 100)).toHaveLength(11);
      const back = await store(1).claimDue(T0 + 600_000, 60_000, 100);
      expect(back.find((d) => d.url === 'https://seller.example/0')?.states).toEqual({ k: state });
    });

    it('writes a probe’s events and schedule only under its own lease, so a probe that outlived it tells no one', async () => {
      await store(0).createWatch(watchRow('wa-l', { webhookUrl: 'https://hooks.example/l' }), T0);
      const [slow] = await store(0).claimDue(T0, 15_000, 10);
      // The slow probe's lease runs out; another instance takes the endpoint, probes it and finishes first.
      const [fast] = await store(1).claimDue(T0 + 15_000, 15_000, 10);
      expect(fast?.leaseUntil).toBeGreaterThan(slow?.leaseUntil ?? 0);
      const finished = (id: string, nowMs: number) => ({
        states: { k: { ...state, receiptId: id } },
        nextDueMs: T0 + 600_000,
        events: [event(`we-${id}`, 'wa-l', 'https://hooks.example/l')],
        nowMs,
      });
      expect(await store(1).finishProbe(fast as DueEndpoint, finished('fast', T0 + 16_000))).toBe(true);
      expect(await store(0).finishProbe(slow as DueEndpoint, finished('slow', T0 + 17_000))).toBe(false);
      expect((await store(2).events('wa-l', { beforeSeq: null, limit: 10 })).map((e) => e.id)).toEqual([
        'we-fast',
      ]);
      expect(await store(2).pending()).toBe(1);
      const [back] = await store(2).claimDue(T0 + 600_000, 15_000, 10);
      expect(back?.states.k?.receiptId).toBe('fast');
      // A lease given back unprobed is free at once, and only its holder can give it back.
      await store(1).releaseProbe({ ...(back as DueEndpoint), leaseUntil: 1 });
      expect(await store(0).claimDue(T0 + 600_000, 15_000, 10)).toEqual([]);
      await store(2).releaseProbe(back as DueEndpoint);
      expect(await store(0).claimDue(T0 + 600_000, 15_000, 10)).toHaveLength(1);
      // A watch_expiring event marks its watch in the same transaction.
      const expiring = { ...event('we-x', 'wa-l', null), event: 'watch_expiring' };
      const done = { states: {}, nextDueMs: T0 + DAY, events: [expiring], nowMs: T0 + 615_000 };
      const [mine] = await store(1).claimDue(T0 + 615_000, 15_000, 10);
      expect(await store(1).finishProbe(mine as DueEndpoint, done)).toBe(true);
      expect((await store(0).watch('wa-l'))?.expiringSent).toBe(true);
    });

    it('puts the watches of a probe’s watch_opted_out notices out of the schedule, in the same transaction', async () => {
      await store(0).createWatch(watchRow('wa-o1'), T0);
      await store(0).createWatch(watchRow('wa-o2', { webhookUrl: null }), T0);
      await store(0).record([event('we-before', 'wa-o1')], T0);
      const [endpoint] = await store(1).claimDue(T0, 15_000, 10);
      const notice = (watchId: string) => ({
        ...event(`we-n-${watchId}`, watchId, null),
        event: 'watch_opted_out',
      });
      const result = {
        states: {},
        nextDueMs: T0 + 600_000,
        events: [notice('wa-o1'), notice('wa-o2')],
        nowMs: T0 + 1_000,
      };
      expect(await store(1).finishProbe(endpoint as DueEndpoint, result)).toBe(true);
      for (const id of ['wa-o1', 'wa-o2']) expect((await store(2).watch(id))?.status).toBe('opted_out');
      expect(await store(2).activeWatchesOf('https://seller.example/api', 'GET', T0 + DAY)).toEqual([]);
      expect(await store(0).claimDue(T0 + DAY, 15_000, 10)).toEqual([]);
      expect(await store(0).pending()).toBe(0);
      expect((await store(0).events('wa-o1', { beforeSeq: null, limit: 10 })).map((e) => e.event)).toEqual([
        'watch_opted_out',
        'terms_changed',
      ]);
      // Resumed (the host left the list): scheduled again, the cancelled delivery pending with its id.
      expect(await store(2).resume('wa-o1', T0 + DAY)).toBe(1);
      expect(await store(0).claimDue(T0 + DAY, 15_000, 10)).toHaveLength(1);
    });

    it('gives a delivery back unattempted only under its own lease', async () => {
      await store(0).createWatch(watchRow('wa-r'), T0);
      await store(0).record([event('we-r', 'wa-r')], T0);
      const [held] = await store(0).claimDeliveries(T0, 30_000, 10);
      expect(held?.leaseUntil).toBe(T0 + 30_000);
      await store(1).releaseDelivery('we-r', 1);
      expect(await store(1).claimDeliveries(T0 + 1, 30_000, 10)).toEqual([]);
      await store(0).releaseDelivery('we-r', held?.leaseUntil ?? 0);
      expect((await store(1).claimDeliveries(T0 + 1, 30_000, 10)).map((d) => d.eventId)).toEqual(['we-r']);
    });

    it('never schedules an endpoint whose watches expired or stopped, and lists only active watches', async () => {
      await store(0).createWatch(watchRow('wa-a', { expiresAtMs: T0 + 1000 }), T0);
      await store(0).createWatch(watchRow('wa-b', { url: 'https://other.example/x' }), T0);
      await store(0).setStatus('wa-b', 'stopped', T0);
      expect(await store(1).claimDue(T0 + 2000, 60_000, 10)).toEqual([]);
      expect(await store(1).activeWatchesOf('https://seller.example/api', 'GET', T0)).toHaveLength(1);
      expect(await store(1).activeWatchesOf('https://seller.example/api', 'GET', T0 + 2000)).toHaveLength(0);
      expect((await store(2).watch('wa-b'))?.status).toBe('stopped');
    });

    it('answers each of several asks of one endpoint at once with its watches once, by its own time', async () => {
      await store(0).createWatch(watchRow('wa-t1', { expiresAtMs: T0 + 1000 }), T0);
      await store(0).createWatch(watchRow('wa-t2'), T0);
      const url = 'https://seller.example/api';
      // Asked together (a probe and a crawl's delisting of the same endpoint): the embedded store answers them
      // with one statement.
      const [early, again, late] = await Promise.all([
        store(1).activeWatchesOf(url, 'GET', T0),
        store(1).activeWatchesOf(url, 'GET', T0),
        store(1).activeWatchesOf(url, 'GET', T0 + 2000),
      ]);
      expect(early.map((w) => w.id).sort()).toEqual(['wa-t1', 'wa-t2']);
      expect(again.map((w) => w.id).sort()).toEqual(['wa-t1', 'wa-t2']);
      expect(late.map((w) => w.id)).toEqual(['wa-t2']);
    });

    it('counts per integrator the hosted watches whose active span overlaps a month, ended by their first stop', async () => {
      const month = (m: string) => {
        const start = Date.parse(`${m}-01T00:00:00.000Z`);
        const next = new Date(start);
        next.setUTCMonth(next.getUTCMonth() + 1);
        return [start, next.getTime()] as const;
      };
      const hosted = (integrator: string) => ({ kind: 'hosted' as const, integrator, keyId: 'k' });
      const make = (id: string, integrator: string | null, createdMs: number, expiresAtMs: number) =>
        store(0).createWatch(
          watchRow(id, {
            owner: integrator === null ? { kind: 'paid', tx: '0x1' } : hosted(integrator),
            createdAt: new Date(createdMs).toISOString(),
            expiresAtMs,
          }),
          createdMs,
        );
      const [oct] = month('2026-10');
      const [nov] = month('2026-11');
      const [dec, jan] = month('2026-12');
      // Active from 24 Nov for 30 days: November and December.
      await make('wa-m1', 'int-1', T0, T0 + 30 * DAY);
      // Deleted the next day: November only.
      await make('wa-m2', 'int-1', T0, T0 + 30 * DAY);
      await store(1).setStatus('wa-m2', 'deleted', T0 + DAY);
      // Paused at the very start of December, deleted later: the pause ends it, so November only.
      await make('wa-m3', 'int-1', T0, T0 + 30 * DAY);
      await store(1).setStatus('wa-m3', 'paused', dec);
      await store(2).setStatus('wa-m3', 'deleted', dec + 10 * DAY);
      // Made in October, expired on 4 November: October and November.
      await make('wa-m4', 'int-2', oct + 4 * DAY, nov + 3 * DAY);
      // Made in December by another integrator, and a watch bought through x402 (never on an invoice).
      await make('wa-m5', 'int-2', dec + DAY, dec + 40 * DAY);
      await make('wa-m6', null, T0, T0 + 30 * DAY);
      const counts = async (m: string) => {
        const [start, end] = month(m);
        return Object.fromEntries(await store(2).watchMonths(start, end));
      };
      expect(await counts('2026-09')).toEqual({});
      expect(await counts('2026-10')).toEqual({ 'int-2': 1 });
      expect(await counts('2026-11')).toEqual({ 'int-1': 3, 'int-2': 1 });
      expect(await counts('2026-12')).toEqual({ 'int-1': 1, 'int-2': 1 });
      expect(await store(0).watchMonths(jan, jan + 31 * DAY)).toEqual(new Map([['int-2', 1]]));
    });

    it('records events and their deliveries together; pages events newest first', async () => {
      await store(0).createWatch(watchRow('wa-e'), T0);
      await store(0).record([event('we-1', 'wa-e'), event('we-2', 'wa-e', null)], T0);
      await store(1).record([event('we-3', 'wa-e')], T0);
      const first = await store(2).events('wa-e', { beforeSeq: null, limit: 2 });
      expect(first.map((e) => e.id)).toEqual(['we-3', 'we-2']);
      const next = await store(2).events('wa-e', { beforeSeq: first[1]?.seq ?? 0, limit: 2 });
      expect(next.map((e) => e.id)).toEqual(['we-1']);
      expect(next[0]?.body).toBe('{"id":"we-1"}');
      expect(await store(0).pending()).toBe(2);
    });

    it('leases each delivery to one instance; retries, delivers, gives up, and cancels with the watch', async () => {
      await store(0).createWatch(watchRow('wa-d'), T0);
      await store(0).record(
        ['we-a', 'we-b', 'we-c', 'we-d'].map((id) => event(id, 'wa-d')),
        T0,
      );
      const claims = await Promise.all([0, 1, 2].map((i) => store(i).claimDeliveries(T0, 30_000, 4)));
      const ids = claims.flat().map((d) => d.eventId);
      expect(ids.sort()).toEqual(['we-a', 'we-b', 'we-c', 'we-d']);
      expect(claims.flat()[0]).toMatchObject({ watchId: 'wa-d', attempts: 0, firstDueMs: T0 });
      await store(0).delivered('we-a');
      await store(0).retryAt('we-b', 1, T0 + 10_000, 'status 500');
      await store(0).giveUp('we-c', 'gave up');
      expect(await store(1).claimDeliveries(T0 + 9_000, 30_000, 10)).toEqual([]);
      const again = await store(1).claimDeliveries(T0 + 30_000, 30_000, 10);
      expect(again.map((d) => [d.eventId, d.attempts]).sort()).toEqual([
        ['we-b', 1],
        ['we-d', 0],
      ]);
      await store(2).setStatus('wa-d', 'paused', T0 + 30_000);
      expect(await store(2).pending()).toBe(0);
      expect(await store(1).claimDeliveries(T0 + DAY, 30_000, 10)).toEqual([]);
    });

    it('resumes a paused watch: active again, billed again, its undelivered events pending with their ids', async () => {
      const hosted = { kind: 'hosted' as const, integrator: 'int-r', keyId: 'k' };
      await store(0).createWatch(watchRow('wa-r', { owner: hosted }), T0);
      await store(0).createWatch(watchRow('wa-other'), T0);
      await store(0).record(
        [event('we-r1', 'wa-r'), event('we-r2', 'wa-r'), event('we-r3', 'wa-r'), event('we-o', 'wa-other')],
        T0,
      );
      await store(0).delivered('we-r1');
      await store(0).giveUp('we-r2', 'status_500');
      await store(1).setStatus('wa-r', 'paused', T0 + DAY);
      expect(await store(1).pending()).toBe(1);
      // Paused on its second day: not billed for a month after that.
      expect(await store(2).watchMonths(T0 + 25 * DAY, T0 + 26 * DAY)).toEqual(new Map());

      const resumeAt = T0 + 2 * DAY;
      expect(await store(2).resume('wa-r', resumeAt)).toBe(2);
      expect((await store(0).watch('wa-r'))?.status).toBe('active');
      expect(await store(0).activeWatchesOf('https://seller.example/api', 'GET', resumeAt)).toHaveLength(2);
      // The span runs to the expiry again, so the month after the pause is billed.
      expect(await store(1).watchMonths(T0 + 25 * DAY, T0 + 26 * DAY)).toEqual(new Map([['int-r', 1]]));
      const due = await store(1).claimDeliveries(resumeAt, 30_000, 10);
      expect(due.map((d) => [d.eventId, d.attempts, d.firstDueMs]).sort()).toEqual([
        ['we-o', 0, T0],
        ['we-r2', 0, resumeAt],
        ['we-r3', 0, resumeAt],
      ]);
      expect(due.find((d) => d.eventId === 'we-r2')?.body).toBe('{"id":"we-r2"}');
      // Resuming an active watch, a deleted one or none changes nothing.
      expect(await store(0).resume('wa-r', resumeAt)).toBe(0);
      await store(0).setStatus('wa-other', 'deleted', resumeAt);
      expect(await store(0).resume('wa-other', resumeAt)).toBe(0);
      expect((await store(0).watch('wa-other'))?.status).toBe('deleted');
      expect(await store(0).resume('wa-none', resumeAt)).toBe(0);
    });
  });
}

testWatchStore('duckdb in memory', async () => {
  const store = await openDuckDbWatchStore(':memory:');
  return { instances: [store], close: () => store.close() };
});

describe('duckdb file', () => {
  it('keeps what it acknowledged across a reopen: the watch, its schedule, events and pending deliveries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spotcheck-watches-'));
    try {
      const path = join(dir, 'watches.duckdb');
      const first = await openDuckDbWatchStore(path);
      await first.createWatch(watchRow('wa-f'), T0);
      await first.record([event('we-f', 'wa-f')], T0);
      await first.close();
      const second = await openDuckDbWatchStore(path);
      expect((await second.watch('wa-f'))?.id).toBe('wa-f');
      expect((await second.claimDeliveries(T0, 1000, 10)).map((d) => d.eventId)).toEqual(['we-f']);
      expect(await second.claimDue(T0, 1000, 10)).toHaveLength(1);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(postgresMissing !== null)('postgres', () => {
  const pg = usePostgres();
  testWatchStore('postgres, three pools', async () => {
    const url = await pg.createDatabase();
    const pools: Sql[] = [0, 1, 2].map(() => postgres(url, { max: 4, onnotice: () => {} }));
    await migrate(pools[0] as Sql);
    return {
      instances: pools.map((sql) => postgresWatchStore(sql)),
      close: async () => {
        await Promise.all(pools.map((sql) => sql.end()));
      },
    };
  });
});
