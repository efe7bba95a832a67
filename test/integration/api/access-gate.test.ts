/**
 * Regression tests of the one access gate (what review found): an exempt caller asking for a dry
 * run gets the dry-run shape; a payment sent with a dry run is never taken; a free or dry-run check's public receipt
 * carries only the free tier's detail (docs/api.md §2.4, §2.6: a receipt holds the answer its caller got).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FREE_ANSWER_KEYS } from '../../fixtures/answers.ts';
import { PAY_TO } from '../../fixtures/challenge.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

const prober = fakeProber();
let running: TestService[] = [];
async function start() {
  const spot = await startTestService({}, { prober }, { listen: false });
  running.push(spot);
  return spot;
}
afterEach(async () => {
  for (const spot of running) await spot.stop();
  running = [];
});

const check = (spot: TestService, query: string, headers: Record<string, string> = {}) =>
  appFetch(spot.service, `/v1/products/endpoint-spot-check?${query}`, { headers });
const target = (n: number | string) =>
  `url=${encodeURIComponent(`https://seller.example/gate/${n}`)}&pay_to=${PAY_TO}&claimed_price=0.01`;

/** Members of the paid answer that a free or dry-run receipt must not publish. */
const PAID_DETAIL = [
  'payment',
  'quality',
  'expiry_check',
  'history_observations',
  'confidence',
  'reputation',
];

describe('the access gate', () => {
  it('gives an exempt caller asking for a dry run the dry-run shape', async () => {
    const spot = await start();
    const res = await check(spot, `${target(1)}&mode=dry-run`, { 'x-service-key': EXEMPT_SECRET });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(FREE_ANSWER_KEYS);
    expect(body).toMatchObject({
      payment_terms_sha256: null,
      check_type: 'dry-run',
      access: { tier: 'exempt' },
    });
  });

  it('never takes a payment sent with a dry run: the dry run is answered free', async () => {
    const spot = await start();
    const res = await check(spot, `${target(2)}&mode=dry-run`, { 'payment-signature': 'bm90LWEtcGF5bWVudA' });
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-response')).toBeNull();
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(FREE_ANSWER_KEYS);
    expect(body.access).toMatchObject({ tier: 'free' });
  });

  it('publishes free and dry-run receipts without the paid detail, and exempt ones with it', async () => {
    const spot = await start();
    const cases = [
      [`${target(3)}&check_expiry=1`, {}, false],
      [`${target(4)}&mode=dry-run&check_expiry=1`, {}, false],
      [`${target(5)}&check_expiry=1`, { 'x-service-key': EXEMPT_SECRET }, true],
    ] as const;
    for (const [query, headers, paidDetail] of cases) {
      const body = (await (await check(spot, query, headers)).json()) as { receipt_id: string };
      const receipt = (await (
        await appFetch(spot.service, `/v1/receipts/${body.receipt_id}`)
      ).json()) as Record<string, unknown>;
      expect(receipt).toMatchObject({ id: body.receipt_id, verdict: 'pay' });
      for (const member of ['payment', 'quality', 'expiry_check']) {
        expect(member in receipt, `${query}: ${member}`).toBe(paidDetail);
      }
      if (!paidDetail) for (const member of PAID_DETAIL) expect(receipt).not.toHaveProperty(member);
    }
  });
});
