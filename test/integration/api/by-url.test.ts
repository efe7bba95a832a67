/**
 * `GET /v1/receipts/by-url` answers a URL's public state (issue 12 item 5, docs/decisions.md "Public state of a
 * URL"): a third party cannot choose it with a dry run, or with an expectation of its own (`pay_to`, `network`,
 * `claimed_price`, an expiry check with its own skew) that turns someone else's URL into `skip`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { outcomeOf402 } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const OTHER_WALLET = '0x9999999999999999999999999999999999999999';
/** The fake seller answers its 402 to GET, and 405 to POST. */
const prober = {
  async probe(url: string, method: 'GET' | 'POST'): Promise<ProbeOutcome> {
    const outcome = outcomeOf402(url);
    if (method === 'GET' || outcome.kind !== 'response') return outcome;
    return { ...outcome, response: { ...outcome.response, status: 405, headers: {}, methodUsed: 'POST' } };
  },
};

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, { prober }, { listen: false });
});
afterAll(() => spot.stop());

let n = 0;
const check = async (url: string, extra: string) => {
  // Each call from its own address, so no free tier runs out.
  const res = await appFetch(
    spot.service,
    `/v1/products/endpoint-spot-check?url=${encodeURIComponent(url)}${extra}`,
    { ip: `198.51.100.${++n}` },
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
});
