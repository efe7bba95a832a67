/**
 * The paid check end to end (issue "Sell through x402", items 3 and 7): the real service on a port, wired to the
 * sandbox world (SDK facilitator over HTTP, anvil with Circle's FiatToken), probing the fleet through the real
 * SSRF-gated prober, and paid by the official buyer client. Money is read on chain, never taken from the answer.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, BASE_USDC } from '../../core/networks.ts';
import { EXEMPT_SECRET } from '../helpers/service.ts';
import { fetchFrom, type PaidWorld, requirementOf, startPaidWorld } from '../helpers/world.ts';

// docs/api.md §8 literals, never read from core/limits.ts: a wrong published limit must fail here.
/** USD 0.02 in atomic USDC. */
const PRICE = 20000n;
/** Free endpoint checks per client per UTC day. */
const FREE_CHECKS = 5;
/** Probe reuse: 5 minutes. */
const PROBE_REUSE_S = 300;
const PATH = '/v1/products/endpoint-spot-check';
let paid: PaidWorld;

beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 6 });
});
afterAll(async () => {
  await paid?.stop();
});

function checkUrl(params: Record<string, string>): string {
  return `${paid.spot.url}${PATH}?${new URLSearchParams(params)}`;
}

function sdkOk(): string {
  return paid.world.sellers.urls['sdk-ok'];
}

/** Uses up the free checks of the client at `ip`; each free answer must say how many are used. */
async function useUpFreeChecks(ip: string): Promise<void> {
  for (let used = 1; used <= FREE_CHECKS; used += 1) {
    const response = await fetchFrom(ip)(checkUrl({ url: sdkOk() }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access: unknown };
    expect(body.access).toEqual({
      tier: 'free',
      free_per_day: FREE_CHECKS,
      free_used_today: used,
    });
  }
}

/** A fresh requirement without spending free quota: a malformed payment header is answered with the 402. */
async function freshRequirement() {
  const response = await fetch(checkUrl({ url: sdkOk() }), {
    headers: { 'PAYMENT-SIGNATURE': 'not-base64!' },
  });
  expect(response.status).toBe(402);
  return requirementOf(response);
}

function expectServiceRequirement(required: ReturnType<typeof requirementOf>): void {
  expect(required.x402Version).toBe(2);
  expect(required.accepts).toHaveLength(1);
  expect(required.accepts[0]).toMatchObject({
    scheme: 'exact',
    network: BASE,
    amount: '20000',
    payTo: paid.world.state.serviceWallet,
  });
  expect(required.accepts[0]?.asset.toLowerCase()).toBe(BASE_USDC.toLowerCase());
}

describe('free checks used up', () => {
  it('the 6th unpaid check from one client answers 402 with the USD 0.02 requirement, in header and body', async () => {
    const ip = '198.18.1.10';
    await useUpFreeChecks(ip);
    const sixth = await fetchFrom(ip)(checkUrl({ url: sdkOk() }));
    expect(sixth.status).toBe(402);
    const required = requirementOf(sixth);
    expectServiceRequirement(required);
    const body = (await sixth.json()) as { accepts: unknown };
    expect(body.accepts).toEqual(required.accepts);
  });
});

describe('a paid check', () => {
  it('the official client pays the 402: the full paid answer, PAYMENT-RESPONSE, and exactly USD 0.02 on chain', async () => {
    const ip = '198.18.2.10';
    await useUpFreeChecks(ip);
    const before = await paid.balances(0);
    const response = await paid.payingFetch(0, { ip })(checkUrl({ url: sdkOk(), claimed_price: '0.01' }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;

    // docs/api.md §2.1: every field of the paid tier is present (free_trial_remaining only with free_trial_active).
    const fields = [
      'verdict',
      'reason',
      'quoted_price_usd',
      'claimed_price_usd',
      'pay_to',
      'network',
      'asset',
      'expected_pay_to',
      'expected_network',
      'expected_source',
      'payment',
      'probe',
      'check_type',
      'payment_terms_sha256',
      'receipt_id',
      'receipt_url',
      'pay_to_changed',
      'reason_code',
      'confidence',
      'history_observations',
      'history',
      'quality',
      'reputation',
      'access',
    ];
    expect(fields.filter((field) => !(field in body))).toEqual([]);
    expect(body).toMatchObject({
      verdict: 'pay',
      reason: 'price_ok',
      reason_code: 'price_ok',
      quoted_price_usd: 0.01,
      claimed_price_usd: 0.01,
      pay_to: paid.world.sellers.payTo,
      network: BASE,
      expected_network: BASE,
      check_type: 'dry-run',
    });
    expect(String(body.asset).toLowerCase()).toBe(BASE_USDC.toLowerCase());
    expect(body.confidence).toMatch(/^(high|medium|low)$/);
    expect(body.payment_terms_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(body.receipt_id).toMatch(/^sc-/);
    expect(body.receipt_url).toBe(`${paid.spot.config.baseUrl}/v1/receipts/${body.receipt_id}`);
    const payment = body.payment as Record<string, unknown>;
    expect(payment).toMatchObject({
      network: BASE,
      amount: { atomic: '10000', usd: 0.01 },
      pay_to: paid.world.sellers.payTo,
      scheme: 'exact',
      asset_is_usdc: true,
      amount_atomic: '10000',
      amount_usd: 0.01,
    });
    expect(Number.isNaN(Date.parse(String(payment.deadline)))).toBe(false);
    expect(payment.deadline_source).toMatch(/^(validBefore|maxTimeoutSeconds|default_60s)$/);
    expect(body.probe).toMatchObject({ cached: expect.any(Boolean), cache_ttl_s: PROBE_REUSE_S });
    expect(Array.isArray(body.history_observations)).toBe(true);
    expect((body.history_observations as unknown[]).length).toBeGreaterThan(0);
    expect(body.history).toMatchObject({ observations: expect.any(Number) });
    expect(body.quality).toMatchObject({ code: expect.any(String) });

    const access = body.access as { tier: string; charged_usd: string; tx: `0x${string}` };
    expect(access).toEqual({
      tier: 'paid',
      charged_usd: '0.02',
      tx: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const settled = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
    expect(settled).toMatchObject({ success: true, transaction: access.tx, network: BASE });

    // The transaction landed and moved exactly the price, buyer → service wallet.
    const transfers = await paid.transfers(access.tx);
    expect(transfers).toEqual([
      { from: paid.buyer(0).address, to: paid.world.state.serviceWallet, value: PRICE },
    ]);
    const after = await paid.balances(0);
    expect(after.service - before.service).toBe(PRICE);
    expect(before.buyer - after.buyer).toBe(PRICE);

    const receipt = (await (await fetch(`${paid.spot.url}/v1/receipts/${body.receipt_id}`)).json()) as Record<
      string,
      unknown
    >;
    // The public receipt says tier paid only with the landed settlement's transaction.
    expect(receipt).toMatchObject({ id: body.receipt_id, verdict: 'pay' });
    expect(receipt.access).toEqual(access);
  });

  it('a request that carries a payment is paid at once, without touching the free quota', async () => {
    const ip = '198.18.3.10';
    const before = await paid.balances(1);
    const header = await paid.sign(1, await freshRequirement());
    const response = await fetchFrom(ip)(checkUrl({ url: sdkOk() }), {
      headers: { 'PAYMENT-SIGNATURE': header },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { access: { tier: string } }).access.tier).toBe('paid');
    const after = await paid.balances(1);
    expect(after.service - before.service).toBe(PRICE);
    const free = await fetchFrom(ip)(checkUrl({ url: sdkOk() }));
    expect(((await free.json()) as { access: unknown }).access).toMatchObject({
      tier: 'free',
      free_used_today: 1,
    });
  });
});

describe('nothing is charged when the answer is not delivered', () => {
  it('bad parameters with a valid payment: 400, nothing settled, and the same payment still buys a check', async () => {
    const before = await paid.balances(2);
    const settles = paid.world.facilitator.calls.settle;
    const header = await paid.sign(2, await freshRequirement());
    const bad = await fetch(checkUrl({ url: sdkOk(), claimed_price: 'abc' }), {
      headers: { 'PAYMENT-SIGNATURE': header },
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('bad_claimed_price');
    expect(paid.world.facilitator.calls.settle).toBe(settles);
    expect(await paid.balances(2)).toEqual(before);

    // The authorization was never used on chain, so it is still good for one check.
    const good = await fetch(checkUrl({ url: sdkOk() }), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(good.status).toBe(200);
    expect((await paid.balances(2)).service - before.service).toBe(PRICE);
  });

  it('a replayed PAYMENT-SIGNATURE is refused with 402; the money moves once', async () => {
    const before = await paid.balances(3);
    const header = await paid.sign(3, await freshRequirement());
    const first = await fetch(checkUrl({ url: sdkOk() }), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(first.status).toBe(200);
    const replay = await fetch(checkUrl({ url: sdkOk() }), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(replay.status).toBe(402);
    expectServiceRequirement(requirementOf(replay));
    const after = await paid.balances(3);
    expect(after.service - before.service).toBe(PRICE);
    expect(before.buyer - after.buyer).toBe(PRICE);
  });

  it('facilitator down: 502 facilitator_unavailable and no balance change', async () => {
    const required = await freshRequirement();
    const before = await paid.balances(4);
    paid.world.facilitator.setMode('down');
    try {
      const header = await paid.sign(4, required);
      const response = await fetch(checkUrl({ url: sdkOk() }), { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(response.status).toBe(502);
      expect(await response.json()).toMatchObject({ error: { code: 'facilitator_unavailable' } });
      // The official client sees the same 502 after a used-up free tier.
      const ip = '198.18.4.10';
      await useUpFreeChecks(ip);
      const viaClient = await paid.payingFetch(4, { ip })(checkUrl({ url: sdkOk() }));
      expect(viaClient.status).toBe(502);
    } finally {
      paid.world.facilitator.setMode('ok');
    }
    expect(await paid.balances(4)).toEqual(before);
  });
});

describe('exempt keys', () => {
  it('an exempt key gets the full answer with tier exempt; no payment is asked and nothing moves', async () => {
    const before = await paid.balances(5);
    const calls = { ...paid.world.facilitator.calls };
    const response = await fetch(checkUrl({ url: sdkOk() }), { headers: { 'x-service-key': EXEMPT_SECRET } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.access).toEqual({ tier: 'exempt' });
    expect(body).toMatchObject({ verdict: 'pay', reason: 'price_ok' });
    expect(body).toHaveProperty('history_observations');
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(paid.world.facilitator.calls.verify).toBe(calls.verify);
    expect(paid.world.facilitator.calls.settle).toBe(calls.settle);
    expect(await paid.balances(5)).toEqual(before);
  });
});
