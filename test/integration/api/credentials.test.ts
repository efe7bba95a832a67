/**
 * No credentials published. A target URL with userinfo is answered 400 `bad_url` (payment status:
 * `bad_seller_url`) before any probe or receipt, on every way in, so `user:pw` never reaches a receipt, the list or
 * the by-url index.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceEvidence, TX } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const prober = fakeProber();
let spot: TestService;
beforeAll(async () => {
  const evidence = (name: string) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 });
  const chain = { read: async () => ({ sources: [evidence('rpc-1'), evidence('rpc-2')] }) };
  spot = await startTestService({}, { prober, chain }, { listen: false });
});
afterAll(async () => {
  await spot.stop();
});

const SECRET = 'hunter2-secret';
const WITH_CREDENTIALS = [
  `https://user:${SECRET}@seller.example/paid`,
  `https://${SECRET}@seller.example/paid`,
  `https://user:${SECRET}@seller.example/paid#x`,
];
const CHECK = '/v1/products/endpoint-spot-check';
const json = { 'content-type': 'application/json' };

async function receiptsText(): Promise<string> {
  const res = await appFetch(spot.service, '/v1/receipts?page_size=500');
  expect(res.status).toBe(200);
  return await res.text();
}

describe('a URL with credentials is refused before any receipt', () => {
  it.each(WITH_CREDENTIALS)('check GET, dry run and POST body of %s → 400 bad_url', async (url) => {
    const calls = prober.calls;
    const answers = [
      await appFetch(spot.service, `${CHECK}?url=${encodeURIComponent(url)}`, { ip: '198.51.100.10' }),
      await appFetch(spot.service, `${CHECK}?url=${encodeURIComponent(url)}&mode=dry-run`, {
        ip: '198.51.100.11',
      }),
      await appFetch(spot.service, CHECK, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ url }),
        ip: '198.51.100.12',
      }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: { code: 'bad_url', message: expect.stringMatching(/user name or password/) },
      });
    }
    expect(prober.calls).toBe(calls);
    expect(await receiptsText()).not.toContain(SECRET);
  });

  it('payment status with such a seller_url → 400 bad_seller_url, POST and GET', async () => {
    const url = WITH_CREDENTIALS[0]!;
    const post = await appFetch(spot.service, '/v1/products/payment-status', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ tx_hash: TX, seller_url: url }),
      ip: '198.51.100.13',
    });
    const get = await appFetch(
      spot.service,
      `/v1/products/payment-status?tx_hash=${TX}&seller_url=${encodeURIComponent(url)}`,
      { ip: '198.51.100.14' },
    );
    for (const res of [post, get]) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_seller_url');
    }
    expect(await receiptsText()).not.toContain(SECRET);
  });

  it('by-url refuses it too, and the same URL without credentials is checked as usual', async () => {
    const byUrl = await appFetch(
      spot.service,
      `/v1/receipts/by-url?url=${encodeURIComponent(WITH_CREDENTIALS[0]!)}`,
    );
    expect(byUrl.status).toBe(400);
    const clean = await appFetch(
      spot.service,
      `${CHECK}?url=${encodeURIComponent('https://seller.example/paid')}`,
      {
        ip: '198.51.100.15',
      },
    );
    expect(clean.status).toBe(200);
    expect(await receiptsText()).toContain('https://seller.example/paid');
  });
});
