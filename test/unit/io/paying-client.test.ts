import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../../../core/budget.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { type ApprovedTerms, createPayingClient } from '../../../io/probe/paying-client.ts';

const account = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const PAY_TO = '0x2222222222222222222222222222222222222222';
const TX = `0x${'ab'.repeat(32)}`;
const terms = (amount: string): ApprovedTerms => ({
  network: BASE,
  asset: BASE_USDC,
  amount_atomic: amount,
  pay_to: PAY_TO,
});

/** A fake seller at the fetch seam: 402 with `offers` until paid, then `paid` (and counts what it saw). */
function seller(offers: Array<{ amount: string; payTo?: string }>, paid: () => Response = () => ok()) {
  const seen = { unpaid: 0, signatures: [] as string[] };
  const fetchImpl: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const signature = request.headers.get('PAYMENT-SIGNATURE');
    if (signature !== null) {
      seen.signatures.push(signature);
      return paid();
    }
    seen.unpaid++;
    const header = encodePaymentRequiredHeader({
      x402Version: 2,
      resource: { url: request.url, description: 'x', mimeType: 'application/json' },
      accepts: offers.map((offer) => ({
        scheme: 'exact',
        network: BASE,
        asset: BASE_USDC,
        amount: offer.amount,
        payTo: offer.payTo ?? PAY_TO,
        maxTimeoutSeconds: 60,
        extra: { name: 'USD Coin', version: '2' },
      })),
    });
    return new Response('{}', { status: 402, headers: { 'PAYMENT-REQUIRED': header } });
  };
  return { fetchImpl, seen };
}

function ok(body = '{"rate":1.0956}', status = 200): Response {
  const header = encodePaymentResponseHeader({
    success: true,
    transaction: TX,
    network: BASE,
    payer: account.address,
  });
  return new Response(body, { status, headers: { 'PAYMENT-RESPONSE': header } });
}

const budget = (usd: string) => {
  const b = createBudget(usd);
  if (b === null) throw new Error('budget');
  return b;
};

describe('the paying client', () => {
  it('pays the approved terms once and reports the answer, the settlement and the signed nonce', async () => {
    const { fetchImpl, seen } = seller([{ amount: '10000' }]);
    const client = createPayingClient({ account, budget: budget('0.05'), fetch: fetchImpl });
    const call = await client.pay({ url: 'https://s.example/fx', method: 'GET' }, terms('10000'));
    expect(call).toMatchObject({
      kind: 'paid',
      status: 200,
      text: '{"rate":1.0956}',
      settlement_tx: TX,
      payer: account.address,
      nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      error: null,
    });
    expect(seen.signatures).toHaveLength(1);
    expect(client.budget().committed).toBe(10_000n * 10n ** 12n);
  });

  it('refuses before signing when the price would exceed the budget left, and says so', async () => {
    const { fetchImpl, seen } = seller([{ amount: '30000' }]);
    const client = createPayingClient({ account, budget: budget('0.05'), fetch: fetchImpl });
    expect((await client.pay({ url: 'https://s.example/a', method: 'GET' }, terms('30000'))).kind).toBe(
      'paid',
    );
    const second = await client.pay({ url: 'https://s.example/a', method: 'GET' }, terms('30000'));
    expect(second).toEqual({
      kind: 'not_paid',
      why: 'budget',
      message: 'refused before signing: USD 0.03 would exceed the budget left, USD 0.02 of 0.05',
    });
    expect(seen.signatures).toHaveLength(1);
    expect(client.budget().committed).toBe(30_000n * 10n ** 12n);
  });

  it('never pays an option other than the approved one', async () => {
    const { fetchImpl, seen } = seller([
      { amount: '10000', payTo: '0x3333333333333333333333333333333333333333' },
      { amount: '20000' },
    ]);
    const client = createPayingClient({ account, budget: budget('1'), fetch: fetchImpl });
    const call = await client.pay({ url: 'https://s.example/a', method: 'GET' }, terms('10000'));
    expect(call).toMatchObject({ kind: 'not_paid', why: 'terms_changed' });
    expect(seen.signatures).toHaveLength(0);
    expect(client.budget().committed).toBe(0n);
  });

  it('says when the seller answered without asking for payment', async () => {
    const client = createPayingClient({
      account,
      budget: budget('1'),
      fetch: async () => new Response('free'),
    });
    expect(await client.pay({ url: 'https://s.example/a', method: 'GET' }, terms('1'))).toMatchObject({
      kind: 'not_paid',
      why: 'no_payment_asked',
    });
  });

  it('records a settled payment whose answer is an error, and cuts an oversized answer', async () => {
    const failing = seller([{ amount: '1' }], () => ok('oops', 500));
    const client = createPayingClient({ account, budget: budget('1'), fetch: failing.fetchImpl });
    const call = await client.pay({ url: 'https://s.example/a', method: 'POST', body: { t: 1 } }, terms('1'));
    expect(call).toMatchObject({ kind: 'paid', status: 500, settlement_tx: TX });
    const huge = seller([{ amount: '1' }], () => ok('x'.repeat(2 * 1024 * 1024)));
    const big = await createPayingClient({ account, budget: budget('1'), fetch: huge.fetchImpl }).pay(
      { url: 'https://s.example/a', method: 'GET' },
      terms('1'),
    );
    expect(big).toMatchObject({ kind: 'paid', truncated: true, text: '' });
  });

  it('keeps a signed payment counted when the paid request fails in transit', async () => {
    const broken = seller([{ amount: '5000' }], () => {
      throw new TypeError('fetch failed');
    });
    const client = createPayingClient({ account, budget: budget('1'), fetch: broken.fetchImpl });
    const call = await client.pay({ url: 'https://s.example/a', method: 'GET' }, terms('5000'));
    expect(call).toMatchObject({ kind: 'paid', status: null, settlement_tx: null, error: 'fetch failed' });
    expect(client.budget().committed).toBe(5_000n * 10n ** 12n);
  });
});
