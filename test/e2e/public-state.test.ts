/**
 * A URL's public record end to end: the real service on a port checks the sandbox's SDK seller; a third party's
 * dry run and live check with its own `pay_to` read `skip pay_to_mismatch` for themselves, and a check of a variant
 * of the URL (a trailing slash, POST) that the seller answers 404 reads `skip no_paywall` for itself, while
 * `/v1/receipts/by-url` keeps answering the seller's public state, `pay`, and its badge stays green.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SellerFleet, startSellers } from '../../sandbox/sellers/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { fetchFrom } from '../helpers/world.ts';

const MALLORY_WALLET = '0x9999999999999999999999999999999999999999';

let fleet: SellerFleet;
let spot: TestService;
beforeAll(async () => {
  fleet = await startSellers();
  spot = await startTestService();
});
afterAll(async () => {
  await spot?.stop();
  await fleet?.close();
});

async function check(ip: string, params: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetchFrom(ip)(
    `${spot.url}/v1/products/endpoint-spot-check?${new URLSearchParams(params)}`,
  );
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('by-url on the sandbox', () => {
  it("a third party's dry run and own pay_to do not become the seller's public record", async () => {
    const url = fleet.urls['sdk-ok'];
    const own = await check('198.51.100.21', { url });
    expect(own).toMatchObject({ verdict: 'pay', reason_code: 'price_ok' });

    const dry = await check('203.0.113.66', { url, mode: 'dry-run', pay_to: MALLORY_WALLET });
    expect(dry).toMatchObject({ verdict: 'skip', reason_code: 'pay_to_mismatch' });
    const live = await check('203.0.113.67', { url, pay_to: MALLORY_WALLET });
    expect(live).toMatchObject({ verdict: 'skip', reason_code: 'pay_to_mismatch' });

    const res = await fetch(`${spot.url}/v1/receipts/by-url?${new URLSearchParams({ url })}`);
    expect(res.status).toBe(200);
    const record = (await res.json()) as Record<string, unknown>;
    expect(record).toMatchObject({ id: own.receipt_id, verdict: 'pay', mode: 'live', expected_source: null });
    // The third party's receipts stay public by id: only the URL's record is not theirs to set.
    const theirs = await fetch(`${spot.url}/v1/receipts/${String(dry.receipt_id)}`);
    expect(((await theirs.json()) as { reason: string }).reason).toBe('pay_to_mismatch');
  });

  it('a check of a variant of the URL (trailing slash, POST) changes neither by-url nor the badge', async () => {
    const url = fleet.urls['sdk-ok'];
    const own = await check('198.51.100.31', { url });
    expect(own).toMatchObject({ verdict: 'pay', reason_code: 'price_ok' });
    // The official SDK seller serves its paywall to a trailing slash too, but not to POST: that check reads
    // `skip no_paywall`, and before the rule was exact it became the URL's record and greyed its badge.
    const slash = await check('203.0.113.71', { url: `${url}/` });
    const post = await check('203.0.113.72', { url, method: 'POST' });
    expect(post).toMatchObject({ verdict: 'skip', reason_code: 'no_paywall' });

    const record = await fetch(`${spot.url}/v1/receipts/by-url?${new URLSearchParams({ url })}`);
    expect(await record.json()).toMatchObject({ id: own.receipt_id, verdict: 'pay' });
    const host = new URL(url).host;
    const badge = await fetch(`${spot.url}/badge/${host}.json`);
    expect(badge.headers.get('x-badge-state')).toBe('pay');
    const path = await fetch(`${spot.url}/badge/${host}.json?path=${new URL(url).pathname}`);
    expect(path.headers.get('x-badge-state')).toBe('pay');
    // Each variant is still its own receipt, and by-url answers it when asked for it exactly.
    const asked = await fetch(`${spot.url}/v1/receipts/by-url?${new URLSearchParams({ url: `${url}/` })}`);
    expect(await asked.json()).toMatchObject({ id: slash.receipt_id });
    const askedPost = await fetch(
      `${spot.url}/v1/receipts/by-url?${new URLSearchParams({ url, method: 'POST' })}`,
    );
    expect(await askedPost.json()).toMatchObject({ id: post.receipt_id, reason: 'no_paywall' });
  });
});
