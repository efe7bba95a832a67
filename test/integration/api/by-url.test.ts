/**
 * `GET /v1/receipts/by-url` answers a URL's public state (docs/decisions.md "Public state of a
 * URL"): a third party cannot choose it with a dry run, or with an expectation of its own (`pay_to`, `network`,
 * `claimed_price`, an expiry check with its own skew) that turns someone else's URL into `skip`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { outcomeOf402 } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const OTHER_WALLET = '0x9999999999999999999999999999999999999999';
/**
 * The fake seller answers its 402 to GET, and 405 to POST. Under `/strict/` it is stricter, as a real seller may
 * be: 404 to a trailing slash, to a query and to POST.
 */
const prober = {
  async probe(url: string, method: 'GET' | 'POST'): Promise<ProbeOutcome> {
    const outcome = outcomeOf402(url);
    if (outcome.kind !== 'response') return outcome;
    const strict = new URL(url).pathname.startsWith('/strict/');
    const exact = method === 'GET' && !url.endsWith('/') && !url.includes('?');
    const status = strict ? (exact ? 402 : 404) : method === 'GET' ? 402 : 405;
    if (status === 402) return outcome;
    return { ...outcome, response: { ...outcome.response, status, headers: {}, methodUsed: method } };
  },
};

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, { prober }, { listen: false });
});
afterAll(() => spot.stop());

let n = 0;
const check = async (url: string, extra: string) => {
  // Each call from its own address, so no free tier runs out …
  const res = await appFetch(
    spot.service,
    `/v1/products/endpoint-spot-check?url=${encodeURIComponent(url)}${extra}`,
    // … and each /24 at most 20 times, under the free tier's ceiling per network.
    { ip: `198.51.${100 + Math.floor(++n / 20)}.${n % 256}` },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { receipt_id: string; verdict: string }).receipt_id;
};
const byUrl = (url: string) =>
  appFetch(spot.service, `/v1/receipts/by-url?url=${encodeURIComponent(url)}`, { ip: '203.0.113.99' });

/** What a third party sends to make someone else's URL read `skip`. */
const thirdParty: Array<[string, string]> = [
  ['a dry run with its own pay_to', `&mode=dry-run&pay_to=${OTHER_WALLET}`],
  ['a dry run named by ref', `&ref=dry-run-mallory&pay_to=${OTHER_WALLET}`],
  ['a dry run with no expectation at all', '&mode=dry-run'],
  ['a live check with its own pay_to', `&pay_to=${OTHER_WALLET}`],
  ['a live check with its own network', '&network=eip155:1'],
  ['a live check with its own claimed_price', '&claimed_price=0.0001'],
  ['a live check with the expiry check and its own skew', '&check_expiry=1&skew_s=300'],
  ['a POST check of a GET endpoint (405)', '&method=POST'],
];

describe('by-url shows the public state', () => {
  it.each(thirdParty)('%s does not replace it', async (_name, extra) => {
    const url = `https://seller.example/public/${++n}`;
    const own = await check(url, '');
    await check(url, extra);
    const res = await byUrl(url);
    expect(res.status).toBe(200);
    const receipt = (await res.json()) as Record<string, unknown>;
    expect(receipt.id).toBe(own);
    expect(receipt).toMatchObject({ verdict: 'pay', mode: 'live', expected_source: null });
  });

  it.each(thirdParty)('%s alone is no public state: 404', async (_name, extra) => {
    const url = `https://seller.example/alone/${++n}`;
    await check(url, extra);
    const res = await byUrl(url);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'receipt_not_found' } });
  });

  it('a later live check without a caller expectation is the new public state', async () => {
    const url = `https://seller.example/later/${++n}`;
    await check(url, '');
    const later = await check(url, '');
    expect(((await (await byUrl(url)).json()) as { id: string }).id).toBe(later);
  });

  it.each([
    ['a check of the URL with a trailing slash', (url: string) => [`${url}/`, '']],
    ['a check of the URL with POST', (url: string) => [url, '&method=POST']],
    ['a check of the URL with its query written otherwise', (url: string) => [`${url}?`, '']],
    ['a check of a made-up path of the same host', (url: string) => [`${url}-made-up/`, '']],
  ] as Array<[string, (url: string) => [string, string]]>)(
    '%s that the seller answers 404 does not replace it, nor grey its badge',
    async (_name, variant) => {
      const host = `strict-${++n}.example`;
      const url = `https://${host}/strict/weather`;
      const own = await check(url, '');
      const [other, extra] = variant(url);
      await check(other, extra);
      const receipt = (await (await byUrl(url)).json()) as Record<string, unknown>;
      expect(receipt).toMatchObject({ id: own, verdict: 'pay' });
      const badge = await appFetch(spot.service, `/badge/${host}.json`, { ip: '203.0.113.98' });
      expect(((await badge.json()) as { message: string }).message).toMatch(/^pay/);
    },
  );

  it('answers a variant asked by name with that variant, and a POST asked with method=POST', async () => {
    const url = `https://seller.example/strict/asked/${++n}`;
    await check(url, '');
    const slash = await check(`${url}/`, '');
    const post = await check(url, '&method=POST');
    expect(((await (await byUrl(`${url}/`)).json()) as { id: string }).id).toBe(slash);
    const asked = await appFetch(
      spot.service,
      `/v1/receipts/by-url?url=${encodeURIComponent(url)}&method=POST`,
      { ip: '203.0.113.97' },
    );
    expect(((await asked.json()) as { id: string }).id).toBe(post);
    const bad = await appFetch(
      spot.service,
      `/v1/receipts/by-url?url=${encodeURIComponent(url)}&method=PUT`,
      {
        ip: '203.0.113.97',
      },
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'bad_method' } });
  });
});
