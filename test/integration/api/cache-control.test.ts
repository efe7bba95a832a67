/**
 * Answers made for one caller are never kept by a cache: every check (GET and POST, dry run included), payment
 * status and lookup answer carries `Cache-Control: no-store`, whatever the tier; a hosted answer is
 * `private, no-store` (a paid one too: `test/unit/api/x402-seller.test.ts`). An answer names the caller's count of
 * the day, a fresh probe or the chain's state now: a cached copy would show another caller's or an old one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceEvidence, TX } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator } from '../../helpers/integrators.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

let spot: TestService;
let hostedKey = '';
beforeAll(async () => {
  const evidence = (name: string) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 });
  const chain = { read: async () => ({ sources: [evidence('rpc-1'), evidence('rpc-2')] }) };
  spot = await startTestService({}, { prober: fakeProber(), chain }, { listen: false });
  const hosted = spot.service.deps.hosted;
  if (!hosted) throw new Error('hosted mode is not wired');
  [hostedKey = ''] = await createIntegrator(hosted, 'cachetest', '0');
});
afterAll(async () => {
  await spot.stop();
});

const CHECK = '/v1/products/endpoint-spot-check';
const PAYMENT_STATUS = '/v1/products/payment-status';
const json = { 'content-type': 'application/json' };
let n = 0;
const url = () => `https://seller.example/cache/${++n}`;

/** Every answering request of the metered routes, for a caller sending `headers`. */
const requests = (headers: Record<string, string>): Array<[string, string, RequestInit]> => [
  ['check GET', `${CHECK}?url=${encodeURIComponent(url())}`, { headers }],
  [
    'check POST',
    CHECK,
    { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify({ url: url() }) },
  ],
  ['dry run GET', `${CHECK}?url=${encodeURIComponent(url())}&mode=dry-run`, { headers }],
  [
    'dry run POST',
    CHECK,
    {
      method: 'POST',
      headers: { ...json, ...headers },
      body: JSON.stringify({ url: url(), mode: 'dry-run' }),
    },
  ],
  ['payment status GET', `${PAYMENT_STATUS}?tx_hash=${TX}`, { headers }],
  [
    'payment status POST',
    PAYMENT_STATUS,
    { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify({ tx_hash: TX }) },
  ],
  ['lookup', '/v1/lookup', { headers }],
];

describe('Cache-Control of answers made for one caller', () => {
  it.each([
    ['free', 'no-store', {}],
    ['exempt', 'no-store', { 'x-service-key': EXEMPT_SECRET }],
  ])('%s answers carry %s', async (_, expected, headers) => {
    let ip = 0;
    for (const [name, path, init] of requests(headers)) {
      const res = await appFetch(spot.service, path, { ...init, ip: `198.51.100.${++ip}` });
      expect(res.status, `${name}: ${await res.clone().text()}`).toBe(200);
      expect(res.headers.get('cache-control'), name).toBe(expected);
    }
  });

  it('hosted answers (the lookup takes no integrator key) carry private, no-store', async () => {
    const hosted = requests({ authorization: `Bearer ${hostedKey}` }).filter(([name]) => name !== 'lookup');
    for (const [name, path, init] of hosted) {
      const res = await appFetch(spot.service, path, { ...init, ip: '198.51.100.100' });
      expect(res.status, `${name}: ${await res.clone().text()}`).toBe(200);
      expect(res.headers.get('cache-control'), name).toBe('private, no-store');
    }
  });

  it('the 402 of a bare request or of a spent free quota is no-store too', async () => {
    const bare = await appFetch(spot.service, PAYMENT_STATUS, { ip: '198.51.100.150' });
    expect(bare.status).toBe(402);
    expect(bare.headers.get('cache-control')).toBe('no-store');
    for (let i = 0; i < 5; i++) {
      await appFetch(spot.service, `${CHECK}?url=${encodeURIComponent(url())}`, { ip: '198.51.100.151' });
    }
    const spent = await appFetch(spot.service, `${CHECK}?url=${encodeURIComponent(url())}`, {
      ip: '198.51.100.151',
    });
    expect(spent.status).toBe(402);
    expect(spent.headers.get('cache-control')).toBe('no-store');
  });
});
