/**
 * The seller adapter against a fake FacilitatorClient (the seam), with payloads signed by the official
 * client (`x402Client` + `ExactEvmScheme`, no network needed to sign).
 */
import { x402Client } from '@x402/core/client';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import {
  type PaymentPayload,
  type PaymentRequired,
  type SettleResponse,
  type SupportedKind,
  VerifyError,
  type VerifyResponse,
} from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { H3 } from 'h3';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it, vi } from 'vitest';
import { OFFER_NAMES, offerFor, offerMethods } from '../../../api/x402/offers.ts';
import {
  createSeller,
  type Offer,
  type PaidHandler,
  paidAccess,
  paidJson,
  SETTLE_MARGIN_SECONDS,
  type SellerConfig,
} from '../../../api/x402/seller.ts';
import { atomicToUsdText } from '../../../core/amount.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { DatabaseUnavailable } from '../../../io/postgres/wait.ts';

const PAY_TO = '0x2222222222222222222222222222222222222222';
const BUYER = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const TX = `0x${'ab'.repeat(32)}`;
const OFFER = offerFor('lookup', 'https://spotcheck.example');

type Fake = FacilitatorClient & { verify: ReturnType<typeof vi.fn>; settle: ReturnType<typeof vi.fn> };

function fakeFacilitator(
  options: {
    verify?: (payload: PaymentPayload) => Promise<VerifyResponse>;
    settle?: (payload: PaymentPayload) => Promise<SettleResponse>;
    v1?: boolean;
  } = {},
): Fake {
  const kinds: SupportedKind[] = [{ x402Version: 2, scheme: 'exact', network: BASE }];
  // v1 kinds carry v1 names; the SDK's Network template type does not allow them.
  if (options.v1 !== false)
    kinds.push({ x402Version: 1, scheme: 'exact', network: 'base' as SupportedKind['network'] });
  return {
    verify: vi.fn(options.verify ?? (async () => ({ isValid: true, payer: BUYER.address }))),
    settle: vi.fn(
      options.settle ??
        // The SDK facilitator names the network as the payload's version does: `base` for v1.
        (async (payload: PaymentPayload) =>
          ({
            success: true,
            transaction: TX,
            network: payload.x402Version === 1 ? 'base' : BASE,
            payer: BUYER.address,
          }) as SettleResponse),
    ),
    getSupported: vi.fn(async () => ({ kinds, extensions: [], signers: {} })),
  };
}

function sellerWith(facilitator: FacilitatorClient, extra: Partial<SellerConfig> = {}) {
  return createSeller({ facilitator, payTo: PAY_TO, ...extra });
}

const okHandler: PaidHandler = async () => paidJson((s) => ({ results: [], access: paidAccess(s) }));

function request(headers: Record<string, string> = {}, method = 'GET') {
  return { req: new Request('https://spotcheck.example/v1/lookup/paid?task=x', { method, headers }) };
}

async function challengeOf(response: Response): Promise<PaymentRequired> {
  return decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED') ?? '');
}

/** A PAYMENT-SIGNATURE value from the official client for the 402 the seller gives now. */
async function signedHeader(seller: ReturnType<typeof createSeller>, offer: Offer = OFFER): Promise<string> {
  const unpaid = await seller.sell(request(), offer, okHandler);
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(BUYER));
  return encodePaymentSignatureHeader(await client.createPaymentPayload(await challengeOf(unpaid)));
}

describe('paymentRequired / unpaid 402', () => {
  it('puts the same v2 PaymentRequired in the header and the body, with Base USDC terms and bazaar', async () => {
    const down: FacilitatorClient = {
      verify: () => Promise.reject(new Error('down')),
      settle: () => Promise.reject(new Error('down')),
      getSupported: () => Promise.reject(new Error('down')),
    };
    const response = await sellerWith(down).sell(request(), OFFER, okHandler);
    expect(response.status).toBe(402);
    const header = await challengeOf(response);
    expect(await response.json()).toEqual(header);
    expect(header).toMatchObject({
      x402Version: 2,
      error: 'Payment required',
      resource: { url: 'https://spotcheck.example/v1/lookup/paid', description: OFFER.description },
    });
    expect(header.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '20000',
        asset: BASE_USDC,
        payTo: PAY_TO,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
    const bazaar = header.extensions?.['bazaar'] as { info: { input: Record<string, unknown> } };
    expect(bazaar.info.input).toMatchObject({
      type: 'http',
      method: 'GET',
      queryParams: { task: 'weather-current' },
    });
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    expect(response.headers.get('Access-Control-Expose-Headers')).toContain('PAYMENT-REQUIRED');
  });

  it('merges extra headers and the error string', async () => {
    const response = await sellerWith(fakeFacilitator()).paymentRequired(OFFER, {
      error: 'free lookups used up',
      headers: { 'x-service-hosted': 'credit_limit' },
    });
    expect(response.headers.get('x-service-hosted')).toBe('credit_limit');
    expect((await challengeOf(response)).error).toBe('free lookups used up');
  });

  it('answers HEAD on a GET route with 402 and never runs the handler (h3 routes HEAD to GET)', async () => {
    const seller = sellerWith(fakeFacilitator());
    const handler = vi.fn(okHandler);
    const app = new H3().get('/v1/lookup/paid', (event) => seller.sell(event, OFFER, handler));
    const response = await app.request('/v1/lookup/paid', { method: 'HEAD' });
    expect(response.status).toBe(402);
    expect(response.headers.get('PAYMENT-REQUIRED')).toBeTruthy();
    expect(handler).not.toHaveBeenCalled();
  });

  it.each([
    ['not base64', '%%%not-base64%%%'],
    ['base64 of non-JSON', Buffer.from('hello').toString('base64')],
    ['base64 of JSON that is no payload', Buffer.from('{"x402Version":2}').toString('base64')],
  ])('refuses a malformed payment header (%s) with invalid_payment_header', async (_name, value) => {
    const facilitator = fakeFacilitator();
    const response = await sellerWith(facilitator).sell(
      request({ 'PAYMENT-SIGNATURE': value }),
      OFFER,
      okHandler,
    );
    expect(response.status).toBe(402);
    expect((await challengeOf(response)).error).toBe('invalid_payment_header');
    expect(facilitator.verify).not.toHaveBeenCalled();
  });
});

describe('paid flow', () => {
  it('verifies, runs the handler, settles, and renders access.tx from the settlement', async () => {
    const facilitator = fakeFacilitator();
    const seller = sellerWith(facilitator);
    const handler = vi.fn(okHandler);
    const response = await seller.sell(
      request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
      OFFER,
      handler,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      results: [],
      access: { tier: 'paid', charged_usd: '0.02', tx: TX },
    });
    const receipt = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
    expect(receipt).toMatchObject({ success: true, transaction: TX, network: BASE });
    // One buyer's answer: no shared cache keeps it, and no private one either (like every per-caller answer).
    expect(response.headers.get('Cache-Control')).toBe('private, no-store');
    expect(handler).toHaveBeenCalledWith({
      payer: BUYER.address,
      network: BASE,
      amountAtomic: '20000',
      x402Version: 2,
      // The authorization's own expiry: what a handler holds for the payment need not outlive it.
      validBefore: expect.any(Number),
      // With the signer, what the chain answers for should this payment's answer never be written.
      nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(facilitator.verify.mock.calls[0]?.[1]).toMatchObject({ amount: '20000', payTo: PAY_TO });
  });

  it('reads X-PAYMENT too, and treats a v2 payload in it as v2', async () => {
    const facilitator = fakeFacilitator();
    const seller = sellerWith(facilitator);
    const response = await seller.sell(
      request({ 'X-PAYMENT': await signedHeader(seller) }),
      OFFER,
      okHandler,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('X-PAYMENT-RESPONSE')).toBeNull();
  });

  it('does not settle when the handler answers 400 (parameters checked after verification)', async () => {
    const facilitator = fakeFacilitator();
    const seller = sellerWith(facilitator);
    const bad = new Response('{"error":{"code":"bad_task"}}', { status: 400 });
    const response = await seller.sell(
      request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
      OFFER,
      async () => bad,
    );
    expect(response.status).toBe(400);
    expect(facilitator.verify).toHaveBeenCalledTimes(1);
    expect(facilitator.settle).not.toHaveBeenCalled();
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
  });

  it('answers 500 and does not settle when the handler throws', async () => {
    const facilitator = fakeFacilitator();
    const onError = vi.fn();
    const seller = sellerWith(facilitator, { onError });
    const response = await seller.sell(
      request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
      OFFER,
      () => Promise.reject(new Error('boom')),
    );
    expect(response.status).toBe(500);
    expect((await response.json()).error.code).toBe('internal_error');
    expect(facilitator.settle).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledWith('handler', expect.any(Error));
  });

  it('answers 503 database_unavailable, settling nothing, when the handler met a database that did not answer', async () => {
    const facilitator = fakeFacilitator();
    const seller = sellerWith(facilitator);
    const response = await seller.sell(
      request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
      OFFER,
      () => Promise.reject(new DatabaseUnavailable('PostgreSQL did not answer within 10000 ms')),
    );
    expect(response.status).toBe(503);
    expect((await response.json()).error.code).toBe('database_unavailable');
    expect(response.headers.get('retry-after')).toBe('5');
    expect(facilitator.settle).not.toHaveBeenCalled();
  });

  it.each([
    ['a result', async () => ({ isValid: false, invalidReason: 'invalid_exact_evm_signature' })],
    [
      'a VerifyError',
      () =>
        Promise.reject(
          new VerifyError(400, { isValid: false, invalidReason: 'invalid_exact_evm_signature' }),
        ),
    ],
  ])(
    'answers 402 with the facilitator invalidReason when verify says invalid (%s)',
    async (_name, verify) => {
      const facilitator = fakeFacilitator({ verify });
      const seller = sellerWith(facilitator);
      const handler = vi.fn(okHandler);
      const response = await seller.sell(
        request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
        OFFER,
        handler,
      );
      expect(response.status).toBe(402);
      expect((await challengeOf(response)).error).toBe('invalid_exact_evm_signature');
      expect(handler).not.toHaveBeenCalled();
    },
  );

  it.each([
    ['throws', { verify: () => Promise.reject(new TypeError('fetch failed')) }, {}],
    ['times out', { verify: () => new Promise<VerifyResponse>(() => {}) }, { verifyTimeoutMs: 20 }],
  ])('answers 502 facilitator_unavailable and nothing else when verify %s', async (_name, fake, extra) => {
    const facilitator = fakeFacilitator(fake);
    const seller = sellerWith(facilitator, extra);
    const handler = vi.fn(okHandler);
    const response = await seller.sell(
      request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
      OFFER,
      handler,
    );
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe('facilitator_unavailable');
    expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(handler).not.toHaveBeenCalled();
  });

  it('lets the same payload be retried after a failure where nothing was broadcast', async () => {
    let calls = 0;
    const facilitator = fakeFacilitator({
      verify: async () =>
        ++calls === 1 ? Promise.reject(new Error('down')) : { isValid: true, payer: BUYER.address },
    });
    const seller = sellerWith(facilitator);
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    expect((await seller.sell(request(headers), OFFER, okHandler)).status).toBe(502);
    expect((await seller.sell(request(headers), OFFER, okHandler)).status).toBe(200);
  });

  it('refuses a payload whose accepted terms were altered, without asking the facilitator', async () => {
    const facilitator = fakeFacilitator();
    const seller = sellerWith(facilitator);
    const payload = JSON.parse(Buffer.from(await signedHeader(seller), 'base64').toString());
    payload.accepted.amount = '1';
    const forged = Buffer.from(JSON.stringify(payload)).toString('base64');
    const response = await seller.sell(request({ 'PAYMENT-SIGNATURE': forged }), OFFER, okHandler);
    expect((await challengeOf(response)).error).toBe('No matching payment requirements');
    expect(facilitator.verify).not.toHaveBeenCalled();
  });
});

describe('settlement failures', () => {
  it.each([
    [
      'refused before broadcast',
      async () =>
        ({
          success: false,
          errorReason: 'insufficient_funds',
          transaction: '',
          network: BASE,
        }) as SettleResponse,
      1,
    ],
    [
      'pending',
      async () =>
        ({
          success: false,
          errorReason: 'settlement_pending',
          transaction: TX,
          network: BASE,
        }) as SettleResponse,
      0,
    ],
    ['of unknown outcome', async () => Promise.reject(new Error('timed out')), 0],
    [
      'landed',
      async () => ({ success: true, transaction: TX, network: BASE, payer: BUYER.address }) as SettleResponse,
      0,
    ],
  ])('calls the answer’s release only when the settlement was %s', async (_n, settle, releases) => {
    const seller = sellerWith(fakeFacilitator({ settle }));
    const release = vi.fn(async () => {});
    await seller.sell(request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }), OFFER, async () =>
      paidJson(() => ({}), { release }),
    );
    expect(release).toHaveBeenCalledTimes(releases);
  });

  it.each([
    [
      'failed',
      { success: false, errorReason: 'invalid_exact_evm_transaction_failed', transaction: '', network: BASE },
    ],
    ['pending', { success: false, errorReason: 'settlement_pending', transaction: TX, network: BASE }],
  ])(
    'answers 402 with PAYMENT-RESPONSE success:false and no paid body when settlement %s',
    async (_n, result) => {
      const facilitator = fakeFacilitator({ settle: async () => result as SettleResponse });
      const seller = sellerWith(facilitator);
      const render = vi.fn(() => ({ secret: 'paid content' }));
      const response = await seller.sell(
        request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
        OFFER,
        async () => paidJson(render),
      );
      expect(response.status).toBe(402);
      expect(render).not.toHaveBeenCalled();
      expect(await response.text()).not.toContain('paid content');
      const receipt = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
      expect(receipt).toMatchObject({ success: false, errorReason: result.errorReason });
    },
  );

  it('holds a payload whose settlement is pending: a replay is refused without another verify', async () => {
    const facilitator = fakeFacilitator({
      settle: async () => ({
        success: false,
        errorReason: 'settlement_pending',
        transaction: TX,
        network: BASE,
      }),
    });
    const seller = sellerWith(facilitator);
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    await seller.sell(request(headers), OFFER, okHandler);
    const replay = await seller.sell(request(headers), OFFER, okHandler);
    expect((await challengeOf(replay)).error).toBe('settlement_pending');
    expect(facilitator.verify).toHaveBeenCalledTimes(1);
  });

  it('answers 502 when settle throws (outcome unknown) and holds the payload', async () => {
    const facilitator = fakeFacilitator({ settle: () => Promise.reject(new Error('socket hang up')) });
    const seller = sellerWith(facilitator);
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    const response = await seller.sell(request(headers), OFFER, okHandler);
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe('facilitator_unavailable');
    expect((await seller.sell(request(headers), OFFER, okHandler)).status).toBe(402);
  });
});

describe('a settle answer that does not describe the payment', () => {
  const landed = { success: true, transaction: TX, network: BASE, payer: BUYER.address, amount: '20000' };
  it.each([
    ['a transaction that is no hash', { ...landed, transaction: 'hello' }],
    ['an empty transaction', { ...landed, transaction: '' }],
    ['a 31-byte transaction', { ...landed, transaction: `0x${'ab'.repeat(31)}` }],
    ['another network', { ...landed, network: 'eip155:1' }],
    ['another amount', { ...landed, amount: '1' }],
    ['another payer', { ...landed, payer: PAY_TO }],
    ['no payer', { success: true, transaction: TX, network: BASE }],
    [
      'hello on eip155:1 for one unit',
      { success: true, transaction: 'hello', network: 'eip155:1', amount: '1' },
    ],
  ])('%s: 502 settlement_unverified, no paid body, the payment key held', async (_name, result) => {
    const facilitator = fakeFacilitator({ settle: async () => result as SettleResponse });
    const onError = vi.fn();
    const seller = sellerWith(facilitator, { onError });
    const render = vi.fn(() => ({ secret: 'paid content' }));
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    const response = await seller.sell(request(headers), OFFER, async () => paidJson(render));
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe('settlement_unverified');
    expect(render).not.toHaveBeenCalled();
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(onError).toHaveBeenCalledWith('settle', expect.any(Error));
    const replay = await seller.sell(request(headers), OFFER, okHandler);
    expect((await challengeOf(replay)).error).toBe('settlement_pending');
    expect(facilitator.verify).toHaveBeenCalledTimes(1);
  });

  it('accepts an answer without amount, with the payer in another letter case', async () => {
    const result = { success: true, transaction: TX, network: BASE, payer: BUYER.address.toLowerCase() };
    const seller = sellerWith(fakeFacilitator({ settle: async () => result as SettleResponse }));
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    expect((await seller.sell(request(headers), OFFER, okHandler)).status).toBe(200);
  });
});

describe('the paid answer is completed only after the settlement landed', () => {
  it('renders after settle, and awaits an async render before the answer leaves', async () => {
    const order: string[] = [];
    const facilitator = fakeFacilitator({
      settle: async () => {
        order.push('settle');
        return { success: true, transaction: TX, network: BASE, payer: BUYER.address } as SettleResponse;
      },
    });
    const seller = sellerWith(facilitator);
    const response = await seller.sell(
      request({ 'PAYMENT-SIGNATURE': await signedHeader(seller) }),
      OFFER,
      async () => {
        order.push('handler');
        return paidJson(async (settlement) => {
          // A render that takes a while (the test's subject): it still comes after the settlement.
          await new Promise((resolve) => setTimeout(resolve, 10));
          order.push('render');
          return { tx: settlement.tx };
        });
      },
    );
    expect(await response.json()).toEqual({ tx: TX });
    expect(order).toEqual(['handler', 'settle', 'render']);
  });

  it('a render that fails after settlement: 500 naming the transaction, PAYMENT-RESPONSE, key held', async () => {
    const onError = vi.fn();
    const seller = sellerWith(fakeFacilitator(), { onError });
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    const response = await seller.sell(request(headers), OFFER, async () =>
      paidJson(() => Promise.reject(new Error('disk full'))),
    );
    expect(response.status).toBe(500);
    expect((await response.json()).error.message).toContain(TX);
    expect(decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '')).toMatchObject({
      success: true,
      transaction: TX,
    });
    expect(onError).toHaveBeenCalledWith('handler', expect.any(Error));
    const replay = await seller.sell(request(headers), OFFER, okHandler);
    expect((await challengeOf(replay)).error).toBe('payment_already_used');
  });
});

describe('an authorization that could expire before settlement', () => {
  // The official client signs validBefore = now + 300 s; a seller clock ahead of it leaves less.
  const sellerAhead = (facilitator: Fake, aheadSeconds: number) => {
    const ahead = () => new Date(Date.now() + aheadSeconds * 1000);
    return sellerWith(facilitator, { handlerBudgetSeconds: 6, now: ahead });
  };

  it('is refused with 402 authorization_expires_too_soon before the handler runs; nothing settled', async () => {
    const facilitator = fakeFacilitator();
    const signer = sellerWith(facilitator);
    const header = await signedHeader(signer);
    // 300 s lifetime, 275 s gone: 25 s left, under 6 s of handler budget plus SETTLE_MARGIN_SECONDS.
    const seller = sellerAhead(facilitator, 275);
    const handler = vi.fn(okHandler);
    const response = await seller.sell(request({ 'PAYMENT-SIGNATURE': header }), OFFER, handler);
    expect(response.status).toBe(402);
    expect((await challengeOf(response)).error).toBe('authorization_expires_too_soon');
    expect(handler).not.toHaveBeenCalled();
    expect(facilitator.settle).not.toHaveBeenCalled();
  });

  it('is accepted with the budget plus the margin left', async () => {
    const facilitator = fakeFacilitator();
    const header = await signedHeader(sellerWith(facilitator));
    const margin = 6 + SETTLE_MARGIN_SECONDS;
    const seller = sellerAhead(facilitator, 300 - margin - 2);
    const response = await seller.sell(request({ 'PAYMENT-SIGNATURE': header }), OFFER, okHandler);
    expect(response.status).toBe(200);
  });
});

describe('replay', () => {
  it('refuses a concurrent duplicate of an in-flight payload at once', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const facilitator = fakeFacilitator({
      verify: async () => {
        await gate;
        return { isValid: true, payer: BUYER.address };
      },
    });
    const seller = sellerWith(facilitator);
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    const first = seller.sell(request(headers), OFFER, okHandler);
    const second = await seller.sell(request(headers), OFFER, okHandler);
    release();
    expect(second.status).toBe(402);
    expect((await challengeOf(second)).error).toBe('payment_in_flight');
    expect((await first).status).toBe(200);
    expect(facilitator.verify).toHaveBeenCalledTimes(1);
    expect(facilitator.settle).toHaveBeenCalledTimes(1);
  });

  it('refuses a payload that already settled, until its validBefore passes', async () => {
    let now = new Date();
    const facilitator = fakeFacilitator();
    const seller = sellerWith(facilitator, { now: () => now });
    const headers = { 'PAYMENT-SIGNATURE': await signedHeader(seller) };
    expect((await seller.sell(request(headers), OFFER, okHandler)).status).toBe(200);
    const replay = await seller.sell(request(headers), OFFER, okHandler);
    expect((await challengeOf(replay)).error).toBe('payment_already_used');
    expect(facilitator.verify).toHaveBeenCalledTimes(1);
    now = new Date(now.getTime() + 301_000);
    await seller.sell(request(headers), OFFER, okHandler);
    expect(facilitator.verify).toHaveBeenCalledTimes(2);
  });
});

describe('x402 v1 payloads in X-PAYMENT', () => {
  const v1Header = () => {
    const authorization = {
      from: BUYER.address,
      to: PAY_TO,
      value: '20000',
      validAfter: '0',
      validBefore: String(Math.floor(Date.now() / 1000) + 300),
      nonce: `0x${'11'.repeat(32)}`,
    };
    const payload = {
      x402Version: 1,
      scheme: 'exact',
      network: 'base',
      payload: { authorization, signature: '0x00' },
    };
    return Buffer.from(JSON.stringify(payload)).toString('base64');
  };

  it('verifies against the v1 requirements and answers with X-PAYMENT-RESPONSE', async () => {
    const facilitator = fakeFacilitator();
    const response = await sellerWith(facilitator).sell(
      request({ 'X-PAYMENT': v1Header() }),
      OFFER,
      okHandler,
    );
    expect(response.status).toBe(200);
    expect(facilitator.verify.mock.calls[0]?.[1]).toMatchObject({
      network: 'base',
      maxAmountRequired: '20000',
      resource: OFFER.resourceUrl,
      asset: BASE_USDC,
      payTo: PAY_TO,
    });
    expect(decodePaymentResponseHeader(response.headers.get('X-PAYMENT-RESPONSE') ?? '').transaction).toBe(
      TX,
    );
  });

  it('refuses v1 with x402_v1_unsupported when the facilitator lists no v1 kind', async () => {
    const facilitator = fakeFacilitator({ v1: false });
    const response = await sellerWith(facilitator).sell(
      request({ 'X-PAYMENT': v1Header() }),
      OFFER,
      okHandler,
    );
    expect((await challengeOf(response)).error).toBe('x402_v1_unsupported');
    expect(facilitator.verify).not.toHaveBeenCalled();
  });
});

describe('offers', () => {
  it.each(OFFER_NAMES.flatMap((name) => offerMethods(name).map((method) => [name, method] as const)))(
    '%s over %s gives a 402 whose header stays small and declares the method',
    async (name, method) => {
      const offer = offerFor(name, 'https://spotcheck.example/', method);
      expect(offer.route.startsWith(`${method} /v1/`)).toBe(true);
      const response = await sellerWith(fakeFacilitator()).paymentRequired(offer);
      // docs/x402.md §9.18: Node clients fail past 16 KB of headers.
      expect(response.headers.get('PAYMENT-REQUIRED')?.length).toBeLessThan(8192);
      const bazaar = (await challengeOf(response)).extensions?.['bazaar'] as {
        info: { input: { method: string } };
      };
      expect(bazaar.info.input.method).toBe(method);
    },
  );

  it('prices the offers per docs/api.md §8 and refuses an unsold method', () => {
    expect(offerFor('setup-pack', 'https://s.example').priceAtomic).toBe('9000000');
    expect(offerFor('check', 'https://s.example', 'POST').route).toBe(
      'POST /v1/products/endpoint-spot-check',
    );
    expect(() => offerFor('lookup', 'https://s.example', 'POST')).toThrow(RangeError);
  });

  it.each([
    ['20000', '0.02'],
    ['9000000', '9'],
    ['1', '0.000001'],
    ['0', '0'],
    ['12345678', '12.345678'],
  ])('charged_usd of %s atomic is %s', (atomic, usd) => {
    expect(atomicToUsdText(atomic)).toBe(usd);
  });
});
