/**
 * Every free bucket has a per-network ceiling: rotating addresses inside one IPv4 /24, or across
 * the /64s of one IPv6 /48, meets a bound on free checks, free lookups, free payment status and dry runs. The
 * counts are journaled with each use, so a restart keeps them; a 400 uses nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainReaderLike } from '../../../api/payment-status.ts';
import { LIMITS } from '../../../core/limits.ts';
import { sourceEvidence, TX } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const chain: ChainReaderLike = {
  async read() {
    const one = (name: string) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 });
    return { sources: [one('rpc-1'), one('rpc-2')] };
  },
};
const overrides = { prober: fakeProber(), chain };

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, overrides, { listen: false });
});
afterAll(() => spot.stop());

let n = 0;
/** One free call of `bucket` from `ip`, each to a fresh target so no answer is shared. */
const call = {
  check: (s: TestService, ip: string) =>
    appFetch(s.service, `/v1/products/endpoint-spot-check?url=https%3A%2F%2Fseller.example%2Fc${++n}`, {
      ip,
    }),
  lookup: (s: TestService, ip: string) => appFetch(s.service, '/v1/lookup?task=fx-rate', { ip }),
  paymentStatus: (s: TestService, ip: string) =>
    appFetch(s.service, `/v1/products/payment-status?tx_hash=${TX}`, { ip }),
  dryRun: (s: TestService, ip: string) =>
    appFetch(
      s.service,
      `/v1/products/endpoint-spot-check?url=https%3A%2F%2Fseller.example%2Fd${++n}&mode=dry-run&ref=r${n}`,
      { ip },
    ),
};
type Bucket = keyof typeof call;

/** The statuses of `count` calls, the i-th from `address(i)`. */
async function rotate(bucket: Bucket, count: number, address: (i: number) => string, s = spot) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await call[bucket](s, address(i));
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  return statuses;
}
/** `allowed` successes, then the refusal status for every call past the ceiling. */
const ceiling = (allowed: number, refused: number, extra = 2) => [
  ...Array<number>(allowed).fill(200),
  ...Array<number>(extra).fill(refused),
];

/** Addresses of one IPv4 /24 (`198.51.k.0/24`), cycling through 250 hosts. */
const in24 = (k: number) => (i: number) => `198.51.${k}.${(i % 250) + 1}`;
/** One address in each /64 of the IPv6 /48 `2001:db8:k::/48`. */
const across48 = (k: number) => (i: number) => `2001:db8:${k}:${i.toString(16)}::${(i % 9) + 1}`;

const cases: Array<[Bucket, number, number, number]> = [
  ['check', LIMITS.freeChecksPerNetwork, LIMITS.freeChecksPerSite, 402],
  ['lookup', LIMITS.freeLookupsPerNetwork, LIMITS.freeLookupsPerSite, 402],
  ['paymentStatus', LIMITS.freePaymentStatusPerNetwork, LIMITS.freePaymentStatusPerSite, 402],
  ['dryRun', LIMITS.dryRunsPerNetwork, LIMITS.dryRunsPerSite, 429],
];

describe('per-network ceilings', () => {
  it.each(cases.map(([bucket, perNetwork, , refused], k) => [bucket, perNetwork, refused, k + 10] as const))(
    '%s: rotating addresses in one /24 meets the ceiling of %i',
    async (bucket, perNetwork, refused, k) => {
      expect(await rotate(bucket, perNetwork + 2, in24(k))).toEqual(ceiling(perNetwork, refused));
      // The next /24 is another network.
      expect(await rotate(bucket, 1, in24(k + 100))).toEqual([200]);
    },
    120_000,
  );

  it.each(cases.map(([bucket, , perSite, refused], k) => [bucket, perSite, refused, k + 10] as const))(
    '%s: a new /64 for every call in one /48 meets the ceiling of %i',
    async (bucket, perSite, refused, k) => {
      expect(await rotate(bucket, perSite + 2, across48(k))).toEqual(ceiling(perSite, refused));
      expect(await rotate(bucket, 1, across48(k + 100))).toEqual([200]);
    },
    240_000,
  );

  it('the /64 ceiling holds inside a /48', async () => {
    const one64 = (i: number) => `2001:db8:77:5::${(i + 1).toString(16)}`;
    expect(await rotate('lookup', LIMITS.freeLookupsPerNetwork + 1, one64)).toEqual(
      ceiling(LIMITS.freeLookupsPerNetwork, 402, 1),
    );
  });

  it('a 400 uses no unit of any ceiling', async () => {
    const net = in24(60);
    for (let i = 0; i < 40; i++) {
      const res = await appFetch(spot.service, '/v1/lookup?task=no-such-task', { ip: net(i) });
      expect(res.status).toBe(400);
    }
    expect(await rotate('lookup', LIMITS.freeLookupsPerNetwork + 1, net)).toEqual(
      ceiling(LIMITS.freeLookupsPerNetwork, 402, 1),
    );
  });
});

describe('exact under concurrency', () => {
  it.each(cases.slice(0, 3).map(([bucket, perNetwork], k) => [bucket, perNetwork, k + 30] as const))(
    '%s: parallel calls from one /24 get exactly %i units',
    async (bucket, perNetwork, k) => {
      const net = in24(k);
      const responses = await Promise.all(
        Array.from({ length: perNetwork + 15 }, (_, i) => call[bucket](spot, net(i))),
      );
      const statuses = responses.map((res) => res.status);
      await Promise.all(responses.map((res) => res.arrayBuffer()));
      expect(statuses.filter((status) => status === 200)).toHaveLength(perNetwork);
      expect(statuses.filter((status) => status === 402)).toHaveLength(15);
    },
  );
});

describe('after a restart', () => {
  it.each(cases.slice(0, 3).map(([bucket, , perSite], k) => [bucket, perSite, k + 90] as const))(
    '%s keeps its /48 count (%i)',
    async (bucket, perSite, k) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-ceiling-'));
      const first = await startTestService({}, overrides, { listen: false, dataDir });
      const site = across48(k);
      expect(await rotate(bucket, perSite - 1, site, first)).toEqual(ceiling(perSite - 1, 402, 0));
      await first.stop({ keepData: true });
      const second = await startTestService({}, overrides, { listen: false, dataDir });
      try {
        expect(await rotate(bucket, 2, (i) => site(i + 1000), second)).toEqual([200, 402]);
      } finally {
        await second.stop();
      }
    },
  );
});
