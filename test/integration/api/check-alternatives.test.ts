/**
 * Alternatives on a skip (docs/api.md §2.1 `alternatives`) through `app.fetch` of the real service, with fakes only at
 * the prober (every probe quotes USD 0.01) and facilitator seams: the list is the lookup's ranking within
 * `claimed_price` without the checked service, the same for free, dry-run, exempt, hosted and paid callers, absent
 * without `task` or on `pay`, null when the catalog cannot be read, and never in the receipt.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, SettleResponse, SupportedKind } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BASE } from '../../../core/networks.ts';
import { TX } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator } from '../../helpers/integrators.ts';
import { paidCallAt } from '../../helpers/paid-calls.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

const BUYER = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const CHECKED = 'https://seller.example/item/1';
const AT = new Date('2026-11-30T11:00:00.000Z');

/** A facilitator that verifies and settles every payment. */
function facilitator(): FacilitatorClient {
  const payerOf = (payload: PaymentPayload) =>
    String((payload.payload as { authorization?: { from?: string } }).authorization?.from ?? '');
  return {
    verify: async (payload: PaymentPayload) => ({ isValid: true, payer: payerOf(payload) }),
    settle: async (payload: PaymentPayload) =>
      ({ success: true, transaction: TX, network: BASE, payer: payerOf(payload) }) as SettleResponse,
    getSupported: async () => ({
      kinds: [{ x402Version: 2, scheme: 'exact', network: BASE } as SupportedKind],
      extensions: [],
      signers: {},
    }),
  };
}

let spot: TestService;
let hostedKey = '';
let calls = 0;
const call = (host: string, extra: Parameters<typeof paidCallAt>[3] = {}) =>
  spot.service.deps.store.addPaidCall(
    paidCallAt(host, new Date(AT.getTime() - ++calls * 60_000), calls, {
      receipt_id: `sc-${host.split('.')[0]}-${calls}`,
      ...extra,
    }),
  );

beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber(), facilitator: facilitator() }, { listen: false });
  const { hosted } = spot.service.deps;
  if (!hosted) throw new Error('hosted mode is not wired');
  [hostedKey = ''] = await createIntegrator(hosted, 'altsintegrator', '100000000');
  // fx-rate, all within USD 0.005 but `dear`: pass rates 1, 1/2, 1/4 and unchecked; `broken` fails on its side.
  await call('best.example', { price_atomic: '4000' });
  await call('best.example', { price_atomic: '4000' });
  await call('half.example', { price_atomic: '1000' });
  await call('half.example', { price_atomic: '1000', known_answer: 'fail' });
  for (const answer of ['pass', 'fail', 'fail', 'fail'] as const)
    await call('quarter.example', { price_atomic: '1000', known_answer: answer });
  await call('unchecked.example', { price_atomic: '500', known_answer: null });
  await call('dear.example', { price_atomic: '20000' });
  await call('broken.example', { price_atomic: '100', delivered: false, http_status: 500 });
  // The checked URL is a candidate too, the best of all: it is never its own alternative.
  await call('seller.example', { endpoint_url: CHECKED, price_atomic: '100' });
  // Another task's services are never offered.
  await call('other.example', { task: 'sha256-hex', price_atomic: '100' });
});
afterAll(async () => {
  await spot?.stop();
});

type Answer = { verdict: string; reason_code: string; receipt_id: string; alternatives?: unknown };
let ip = 0;
async function check(query: string, headers: Record<string, string> = {}, client = `198.51.100.${++ip}`) {
  const res = await appFetch(spot.service, `/v1/products/endpoint-spot-check?${query}`, {
    headers,
    ip: client,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Answer;
}
const SKIP = `url=${encodeURIComponent(CHECKED)}&claimed_price=0.005&task=fx-rate`;
const receiptUrl = (id: string) => `${spot.config.baseUrl}/v1/receipts/${id}`;

const expected = () => [
  {
    service_id: 'best.example/run',
    endpoint: 'https://best.example/run',
    network: BASE,
    price_atomic: '4000',
    price_usd: 0.004,
    pass_rate: 1,
    receipt_url: receiptUrl('sc-best-1'),
  },
  {
    service_id: 'half.example/run',
    endpoint: 'https://half.example/run',
    network: BASE,
    price_atomic: '1000',
    price_usd: 0.001,
    pass_rate: 0.5,
    receipt_url: receiptUrl('sc-half-3'),
  },
  {
    service_id: 'quarter.example/run',
    endpoint: 'https://quarter.example/run',
    network: BASE,
    price_atomic: '1000',
    price_usd: 0.001,
    pass_rate: 0.25,
    receipt_url: receiptUrl('sc-quarter-5'),
  },
];

describe('a skip of a check naming a task', () => {
  it('lists the lookup’s first three services within claimed_price, without the checked one', async () => {
    const answer = await check(SKIP);
    expect(answer).toMatchObject({ verdict: 'skip', reason_code: 'price_mismatch' });
    expect(answer.alternatives).toEqual(expected());
    // The order is the lookup's, with the same ceiling.
    const lookup = await appFetch(spot.service, '/v1/lookup?task=fx-rate&max_price=0.005', {
      headers: { 'x-service-key': EXEMPT_SECRET },
    });
    const { results } = (await lookup.json()) as { results: Array<{ service_id: string }> };
    expect(results.map((r) => r.service_id).filter((id) => id !== 'seller.example/item/1')).toEqual([
      ...expected().map((e) => e.service_id),
      'unchecked.example/run',
    ]);
  });

  it('without claimed_price, every ranked service may be listed', async () => {
    const answer = await check(
      `url=${encodeURIComponent(CHECKED)}&task=fx-rate&pay_to=${'0x'.padEnd(42, '9')}`,
    );
    expect(answer.reason_code).toBe('pay_to_mismatch');
    expect((answer.alternatives as Array<{ service_id: string }>).map((a) => a.service_id)).toEqual([
      'best.example/run',
      'dear.example/run',
      'half.example/run',
    ]);
  });

  it('is an empty list when no service is within the price', async () => {
    const answer = await check(`url=${encodeURIComponent(CHECKED)}&claimed_price=0.0001&task=fx-rate`);
    expect(answer.alternatives).toEqual([]);
  });

  it('is the same for free, dry-run, exempt, hosted and paid callers', async () => {
    const free = await check(SKIP);
    const dry = await check(`${SKIP}&mode=dry-run`);
    const exempt = await check(SKIP, { 'x-service-key': EXEMPT_SECRET });
    const hosted = await check(SKIP, { authorization: `Bearer ${hostedKey}` });
    const payer = '192.0.2.77';
    for (let i = 0; i < 5; i++) await check(SKIP, {}, payer);
    const unpaid = await appFetch(spot.service, `/v1/products/endpoint-spot-check?${SKIP}`, { ip: payer });
    expect(unpaid.status).toBe(402);
    const client = x402Client.fromConfig({ schemes: [{ network: BASE, client: new ExactEvmScheme(BUYER) }] });
    const signature = encodePaymentSignatureHeader(
      await client.createPaymentPayload(
        decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? ''),
      ),
    );
    const paid = await check(SKIP, { 'payment-signature': signature }, payer);
    expect((paid as unknown as { access: { tier: string } }).access.tier).toBe('paid');
    for (const answer of [free, dry, exempt, hosted, paid]) expect(answer.alternatives).toEqual(expected());
  });

  it('is never in the receipt', async () => {
    for (const headers of [{}, { 'x-service-key': EXEMPT_SECRET }]) {
      const answer = await check(SKIP, headers);
      const res = await appFetch(spot.service, `/v1/receipts/${answer.receipt_id}`);
      const receipt = (await res.json()) as Record<string, unknown>;
      expect(receipt).toMatchObject({ id: answer.receipt_id, task: 'fx-rate', verdict: 'skip' });
      expect(receipt).not.toHaveProperty('alternatives');
    }
  });

  it('is null when the catalog cannot be read, and the answer is issued anyway', async () => {
    const store = spot.service.deps.store;
    const spy = vi.spyOn(store, 'paidCalls').mockRejectedValue(new Error('down'));
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const answer = await check(SKIP);
      expect(answer).toMatchObject({ verdict: 'skip', alternatives: null });
      expect(answer.receipt_id).toMatch(/^sc-/);
    } finally {
      spy.mockRestore();
      quiet.mockRestore();
    }
  });
});

describe('every other answer has no alternatives member', () => {
  it.each([
    ['a skip without task', `url=${encodeURIComponent(CHECKED)}&claimed_price=0.005`],
    ['a pay naming a task', `url=${encodeURIComponent(CHECKED)}&task=fx-rate`],
  ])('%s', async (_name, query) => {
    for (const headers of [{}, { 'x-service-key': EXEMPT_SECRET }]) {
      expect(await check(query, headers)).not.toHaveProperty('alternatives');
    }
  });
});
