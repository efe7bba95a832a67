/**
 * Ways to get free work without limit that the quota must close: a fresh `ref` for every dry run, and a client-chosen
 * `X-Forwarded-For` entry in front of the one the proxy appends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, fromPeer, startTestService, type TestService } from '../../helpers/service.ts';

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber() }, { listen: false });
});
afterAll(async () => {
  await spot.stop();
});

const check = (query: string, headers: Record<string, string>) =>
  spot.service.app.fetch(
    fromPeer(new Request(`http://spotcheck.test/v1/products/endpoint-spot-check?${query}`, { headers })),
  );

describe('quota abuse', () => {
  it('a new ref per dry run still meets the per-address ceiling of 200 a day', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 205; i++) {
      const res = await appFetch(
        spot.service,
        `/v1/products/endpoint-spot-check?url=https%3A%2F%2Fseller.example%2F${i}&mode=dry-run&ref=r${i}`,
        { ip: '198.51.100.200' },
      );
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(200);
    expect(statuses.slice(200)).toEqual([429, 429, 429, 429, 429]);
  }, 60_000);

  it('counts the address the proxy appended, not one the client put in front of it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await check(`url=https%3A%2F%2Fseller.example%2Fx${i}`, {
        'x-forwarded-for': `10.${i}.0.1, 203.0.113.250`,
      });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 402, 402, 402]);
  });
});
