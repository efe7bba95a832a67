/**
 * The app's reputation lookup: reads the URL host's evidence, keeps it per host for its ttl, answers the kept value
 * while one refresh runs, and keeps at most `maxHosts` hosts.
 */
import { describe, expect, it } from 'vitest';
import { createReputationLookup } from '../../../api/reputation-lookup.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import type { HostObservation } from '../../../core/reputation.ts';

const NOW = new Date('2026-11-30T00:00:00.000Z');
const A = 'GET https://api.example/a';
const day = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();

function obs(endpoint: string, daysAgo: number): HostObservation {
  return {
    endpoint,
    observed_at: day(daysAgo),
    http_status: 402,
    price_usd: 0.01,
    amount_atomic: '10000',
    network: BASE,
    asset: BASE_USDC,
    pay_to: '0x1111111111111111111111111111111111111111',
  };
}

describe('createReputationLookup', () => {
  it('reads the evidence of the URL host and scores it', async () => {
    const asked: string[] = [];
    const lookup = createReputationLookup({
      now: () => NOW,
      source: {
        async observationsByHost(host) {
          asked.push(`obs ${host}`);
          return [1, 2, 3, 4, 5].map((d) => obs(A, d));
        },
        async checksByHost(host) {
          asked.push(`checks ${host}`);
          return [];
        },
        async paidCalls({ host }) {
          asked.push(`paid ${host}`);
          return [];
        },
      },
    });
    const result = await lookup({ url: 'https://API.example:8443/a?x=1' });
    expect(result).toMatchObject({ host: 'api.example:8443', score: 100 });
    expect(asked.sort()).toEqual([
      'checks api.example:8443',
      'obs api.example:8443',
      'paid api.example:8443',
    ]);
  });

  it('after its TTL answers the kept value at once while one refresh runs, so a check never waits for the store', async () => {
    let now = NOW.getTime();
    let release: (() => void) | null = null;
    let calls = 0;
    let days = [1, 2, 3, 4, 5];
    const lookup = createReputationLookup({
      now: () => new Date(now),
      ttlMs: 1000,
      source: {
        async observationsByHost() {
          calls++;
          if (calls > 1) await new Promise<void>((done) => (release = done));
          return days.map((d) => obs(A, d));
        },
        checksByHost: async () => [],
        paidCalls: async () => [],
      },
    });
    const first = await lookup({ url: 'https://api.example/a' });
    expect(first).toMatchObject({ score: 100, inputs: { observations: 5 } });
    now += 5000;
    days = [1, 2, 3, 4, 5, 6];
    const waited = new Promise((done) => setTimeout(() => done('waited for the store'), 20));
    expect(await Promise.race([lookup({ url: 'https://api.example/a' }), waited])).toBe(first);
    expect(await lookup({ url: 'https://api.example/a' })).toBe(first);
    expect(calls).toBe(2);
    (release as (() => void) | null)?.();
    await new Promise((done) => setTimeout(done, 0));
    expect(await lookup({ url: 'https://api.example/a' })).toMatchObject({ inputs: { observations: 6 } });
  });

  it('is null when the store fails', async () => {
    const errors: unknown[] = [];
    const fail = async (): Promise<never> => {
      throw new Error('database is locked');
    };
    const lookup = createReputationLookup({
      now: () => NOW,
      source: { observationsByHost: fail, checksByHost: async () => [], paidCalls: async () => [] },
      onError: (error) => errors.push(error),
    });
    expect(await lookup({ url: 'https://api.example/a' })).toBeNull();
    expect(errors).toHaveLength(1);
  });

  it('reuses the reputation of a host for the ttl, then reads again; concurrent callers share one read', async () => {
    let reads = 0;
    let clock = NOW.getTime();
    const lookup = createReputationLookup({
      now: () => new Date(clock),
      ttlMs: 60_000,
      source: {
        async observationsByHost() {
          reads++;
          return [1, 2, 3, 4, 5].map((d) => obs(A, d));
        },
        checksByHost: async () => [],
        paidCalls: async () => [],
      },
    });
    await Promise.all([lookup({ url: 'https://api.example/a' }), lookup({ url: 'https://api.example/b' })]);
    expect(reads).toBe(1);
    clock += 59_000;
    await lookup({ url: 'https://api.example/c' });
    expect(reads).toBe(1);
    clock += 2_000;
    await lookup({ url: 'https://api.example/c' });
    expect(reads).toBe(2);
    await lookup({ url: 'https://other.example/c' });
    expect(reads).toBe(3);
  });

  it('keeps at most maxHosts hosts, dropping the least recently asked first', async () => {
    const reads: string[] = [];
    const lookup = createReputationLookup({
      now: () => NOW,
      maxHosts: 2,
      source: {
        async observationsByHost(host) {
          reads.push(host);
          return [1, 2, 3, 4, 5].map((d) => obs(A, d));
        },
        checksByHost: async () => [],
        paidCalls: async () => [],
      },
    });
    await lookup({ url: 'https://a.example/x' });
    await lookup({ url: 'https://b.example/x' });
    await lookup({ url: 'https://a.example/x' }); // a is now the most recent
    await lookup({ url: 'https://c.example/x' }); // drops b
    expect(reads).toEqual(['a.example', 'b.example', 'c.example']);
    await lookup({ url: 'https://a.example/x' });
    await lookup({ url: 'https://c.example/x' });
    expect(reads).toHaveLength(3);
    await lookup({ url: 'https://b.example/x' });
    expect(reads).toEqual(['a.example', 'b.example', 'c.example', 'b.example']);
  });
});
