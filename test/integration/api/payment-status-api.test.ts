/**
 * The payment-status routes through `app.fetch` with the real journal, DuckDB, signing key and x402 seller, and
 * fakes at the injected seams: the chain reader (evidence as the RPC sources would report it), the prober (the
 * seller's live 402) and the facilitator (paid calls). Every 400 code, the bare 402, the free tier, 503
 * `chain_unavailable` without using a free check, the paid flow, and the signed `ps-` receipt.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { SettleResponse, SupportedKind } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChainReaderLike, chainReaderFromUrls } from '../../../api/payment-status.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import type { ChainQuery, SourceEvidence } from '../../../core/payment-status.ts';
import { verifyReceipt } from '../../../verify/verify.ts';
import { buildAccept, PAY_TO, RESOURCE_URL } from '../../fixtures/challenge.ts';
import {
  type PaymentStatusAnswer as Answer,
  sourceEvidence,
  TX,
  unreachableSource,
} from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

const BUYER = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const NONCE = `0x${'7a'.repeat(32)}` as const;
const SETTLE_TX = `0x${'cd'.repeat(32)}` as const;
const HEAD_TIME = 1_800_000_000;
const SELLER_URL = 'https://seller.example/paid';

/** The chain as the fake sources report it; tests switch `chainMode`. */
let chainMode: 'pending' | 'landed' | 'down' = 'pending';
const reads: ChainQuery[] = [];
const chain: ChainReaderLike = {
  async read(query) {
    reads.push(query);
    const one = (name: string): SourceEvidence => {
      if (chainMode === 'down') return unreachableSource(name, 'refused');
      if (chainMode === 'landed') {
        return sourceEvidence({
          name,
          head: 500,
          headTime: HEAD_TIME,
          nonceUsed: true,
          usedLog: { txHash: TX, blockNumber: 490 },
          receipt: {
            txHash: TX,
            status: 'success',
            blockNumber: 490,
            transfer: { from: BUYER.address, to: PAY_TO, value: 10_000n },
          },
          rpcCalls: 4,
        });
      }
      return sourceEvidence({ name, head: 500, headTime: HEAD_TIME });
    };
    return { sources: [one('rpc-1'), one('rpc-2')] };
  },
};

const prober = fakeProber();

const settles: unknown[] = [];
const facilitator: FacilitatorClient = {
  verify: async () => ({ isValid: true, payer: BUYER.address }),
  settle: async (payload) => {
    settles.push(payload);
    return { success: true, transaction: SETTLE_TX, network: BASE, payer: BUYER.address } as SettleResponse;
  },
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: 'exact', network: BASE } as SupportedKind],
    extensions: [],
    signers: {},
  }),
};

let running: TestService[] = [];
async function start(overrides: { chain?: ChainReaderLike | null } = {}) {
  const spot = await startTestService({}, { prober, facilitator, chain, ...overrides }, { listen: false });
  running.push(spot);
  return spot;
}
afterEach(async () => {
  for (const spot of running) await spot.stop();
  running = [];
  chainMode = 'pending';
});

/** A v2 PAYMENT-SIGNATURE value as a buyer sends it (the signature is not checked by payment status). */
function payload(overrides: { validBefore?: number; to?: string } = {}): string {
  const authorization = {
    from: BUYER.address,
    to: overrides.to ?? PAY_TO,
    value: '10000',
    validAfter: '0',
    validBefore: String(overrides.validBefore ?? HEAD_TIME + 60),
    nonce: NONCE,
  };
  const json = {
    x402Version: 2,
    payload: { authorization, signature: `0x${'11'.repeat(65)}` },
    accepted: buildAccept(),
  };
  return Buffer.from(JSON.stringify(json)).toString('base64');
}

const PATH = '/v1/products/payment-status';
const post = (spot: TestService, body: unknown, init: RequestInit & { ip?: string } = {}) =>
  appFetch(spot.service, PATH, {
    ...init,
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
  });
const get = (spot: TestService, query: string, init: RequestInit & { ip?: string } = {}) =>
  appFetch(spot.service, `${PATH}?${query}`, init);
const json = async (res: Response) => (await res.json()) as Answer;

describe('400 codes (docs/api.md §7), never metered', () => {
  const ADDR = BUYER.address;
  const cases: Array<[string, unknown, string]> = [
    ['a member but no reference', { client: 'agent-7' }, 'missing_reference'],
    ['from without nonce', { from: ADDR }, 'missing_reference'],
    ['a payload that is not base64 JSON', { payment_payload: '%%%' }, 'bad_payload'],
    ['a short from', { from: '0x12', nonce: NONCE }, 'bad_from'],
    ['a short nonce', { from: ADDR, nonce: '0x12' }, 'bad_nonce'],
    ['a bad tx_hash', { tx_hash: '0xzz' }, 'bad_tx_hash'],
    ['nonce without from', { nonce: NONCE }, 'inconsistent'],
    ['from differing from the payload', { payment_payload: payload(), from: PAY_TO }, 'inconsistent'],
    ['another network', { tx_hash: TX, network: 'eip155:1' }, 'unsupported_network'],
    ['another asset', { tx_hash: TX, asset: `0x${'22'.repeat(20)}` }, 'unsupported_asset'],
    ['a non-http seller_url', { tx_hash: TX, seller_url: 'ftp://seller.example/x' }, 'bad_seller_url'],
    ['a member of the wrong type', { tx_hash: 5 }, 'bad_body'],
    ['a client with an escape sequence', { tx_hash: TX, client: '\u001b[2Jagent' }, 'bad_client'],
    ['a ref behind a right-to-left override', { tx_hash: TX, ref: '\u202eagent' }, 'bad_ref'],
    ['terms with a hidden payee', { tx_hash: TX, terms: { payTo: `${PAY_TO}\u200b` } }, 'bad_terms'],
    ['terms with a padded amount', { tx_hash: TX, terms: { amount: '010000' } }, 'bad_terms'],
    ['unparseable JSON', '{', 'bad_body'],
    ['a JSON array', '[1]', 'bad_body'],
  ];
  it.each(cases.map(([name, body, code]) => ({ name, body, code })))(
    'POST with $name → $code',
    async ({ body, code }) => {
      const spot = await start();
      const res = await post(spot, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { code, message: expect.any(String) } });
    },
  );

  it.each([
    ['tx_hash=0x12', 'bad_tx_hash'],
    [`tx_hash=${TX}&tx_hash=${TX}`, 'bad_body'],
    [`from=${BUYER.address}&nonce=${NONCE}&valid_before=soon`, 'bad_body'],
    [`tx_hash=${TX}&seller_url=not-a-url`, 'bad_seller_url'],
  ])('GET ?%s → %s', async (query, code) => {
    const spot = await start();
    const res = await get(spot, query);
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe(code);
  });

  it('uses no free check and reads no chain', async () => {
    const spot = await start();
    const before = reads.length;
    for (let i = 0; i < 8; i++) expect((await post(spot, { tx_hash: '0x1' })).status).toBe(400);
    expect(reads.length).toBe(before);
    const ok = await json(await post(spot, { tx_hash: TX }));
    expect(ok.access).toEqual({ tier: 'free', free_per_day: 5, free_used_today: 1 });
  });
});

describe('402', () => {
  it.each([
    ['GET without parameters', (spot: TestService) => get(spot, '')],
    ['GET with empty parameters', (spot: TestService) => get(spot, 'tx_hash=&from=')],
    ['POST without a body', (spot: TestService) => appFetch(spot.service, PATH, { method: 'POST' })],
    ['POST {}', (spot: TestService) => post(spot, {})],
  ])('a bare request (%s) answers 402 with the USD 0.02 requirement', async (_name, send) => {
    const spot = await start();
    const res = await send(spot);
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required') ?? '');
    expect(required.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: BASE,
      amount: '20000',
      asset: BASE_USDC,
      payTo: spot.service.serviceWallet.address,
    });
    expect(required.resource.url).toMatch(/\/v1\/products\/payment-status$/);
  });

  it('gives 5 free checks per client per UTC day, then 402', async () => {
    const spot = await start();
    const used: Array<number | undefined> = [];
    for (let i = 0; i < 5; i++) {
      const res = await post(spot, { payment_payload: payload() });
      expect(res.status).toBe(200);
      used.push((await json(res)).access.free_used_today);
    }
    expect(used).toEqual([1, 2, 3, 4, 5]);
    const sixth = await get(spot, `tx_hash=${TX}`);
    expect(sixth.status).toBe(402);
    expect(sixth.headers.get('payment-required')).toBeTruthy();
    // Another client still has its own five.
    expect((await post(spot, { tx_hash: TX }, { ip: '198.51.100.9' })).status).toBe(200);
  });
});

describe('503 chain_unavailable (docs/api.md §7)', () => {
  it('when no source answers: nothing issued and the free check given back', async () => {
    const spot = await start();
    chainMode = 'down';
    for (let i = 0; i < 6; i++) {
      const res = await post(spot, { payment_payload: payload() });
      expect(res.status).toBe(503);
      expect((await json(res)).error.code).toBe('chain_unavailable');
    }
    chainMode = 'pending';
    const ok = await json(await post(spot, { payment_payload: payload() }));
    expect(ok.access.free_used_today).toBe(1);
  });

  it('when RPC_URLS is empty, naming the setting, for free and exempt callers', async () => {
    const spot = await start({ chain: null });
    const free = await post(spot, { tx_hash: TX });
    expect(free.status).toBe(503);
    expect(await free.json()).toEqual({
      error: { code: 'chain_unavailable', message: expect.stringContaining('RPC_URLS') },
    });
    const exempt = await post(spot, { tx_hash: TX }, { headers: { 'x-service-key': EXEMPT_SECRET } });
    expect(exempt.status).toBe(503);
    // Bad input is still a 400 first, and a bare request still a 402.
    expect((await post(spot, { tx_hash: '0x' })).status).toBe(400);
    expect((await post(spot, {})).status).toBe(402);
  });
});

describe('the answer and its receipt', () => {
  it('has the docs/api.md §2.7 fields; the signed copy is served at its URL and verifies', async () => {
    const spot = await start();
    const res = await get(
      spot,
      new URLSearchParams({ payment_payload: payload(), client: 'agent-7' }).toString(),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await json(res);
    expect(body).toMatchObject({
      type: 'payment-status',
      status: 'pending',
      reason: 'unused_not_expired',
      safe_to_retry_same_payload: true,
      safe_to_resign: false,
      wait_until: new Date((HEAD_TIME + 60 + 120) * 1000).toISOString(),
      authorization: { from: BUYER.address, nonce: NONCE, used_onchain: false, expired: false },
      tx: null,
      terms_match: {
        amount: 'match',
        pay_to: 'match',
        asset: 'match',
        network: 'match',
        source: 'payment_payload',
      },
      finality: { confirmations: null, min_confirmations: 10, reorg_safe: false },
      rpc: {
        sources: [
          { name: 'rpc-1', ok: true, head: 500 },
          { name: 'rpc-2', ok: true, head: 500 },
        ],
        sources_agreed: 2,
      },
      access: { tier: 'free', free_per_day: 5, free_used_today: 1 },
    });
    expect(body.id).toMatch(/^ps-[a-z2-7]{26}$/);
    expect(body.claim.receipt).toBe(`${spot.config.baseUrl}/v1/receipts/${body.id}`);
    expect(body.cannot_know.length).toBeGreaterThan(0);

    const { receipt, access: _access, ...fields } = body;
    expect(receipt).toMatchObject({ ...fields, kid: expect.any(String), signature: expect.any(String) });
    expect(receipt).toMatchObject({ client: 'agent-7', access: { tier: 'free' } });
    const served = await appFetch(spot.service, `/v1/receipts/${body.id}`);
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual(receipt);
    const jwks = await (await appFetch(spot.service, '/.well-known/jwks.json')).json();
    expect(await verifyReceipt(receipt, jwks)).toEqual({ ok: true, kid: receipt.kid });
    expect(await verifyReceipt({ ...receipt, status: 'landed' }, jwks)).toMatchObject({ ok: false });
  });

  it('reports a landed payment from evidence, with the transaction and its confirmations', async () => {
    const spot = await start();
    chainMode = 'landed';
    const body = await json(await post(spot, { tx_hash: TX }));
    expect(body).toMatchObject({
      status: 'landed',
      reason: 'settled_onchain',
      safe_to_resign: false,
      tx: { hash: TX, block: 490, status: 'success', transfer: { value: '10000' } },
      finality: { confirmations: 11, reorg_safe: true },
    });
  });

  it('compares against the seller live 402 (probed once, through the probe cache); explicit terms win', async () => {
    const spot = await start();
    const before = prober.calls;
    const matched = await json(await post(spot, { payment_payload: payload(), seller_url: SELLER_URL }));
    expect(matched.terms_match).toMatchObject({
      amount: 'match',
      pay_to: 'match',
      source: 'seller_challenge',
      compared: 'authorization',
    });
    expect(matched.claim).toMatchObject({ seller_url: SELLER_URL, contact: RESOURCE_URL });

    const other = await json(
      await post(spot, { payment_payload: payload({ to: `0x${'33'.repeat(20)}` }), seller_url: SELLER_URL }),
    );
    expect(other.terms_match).toMatchObject({ pay_to: 'mismatch', source: 'seller_challenge' });

    const explicit = await json(
      await post(spot, {
        payment_payload: payload(),
        seller_url: SELLER_URL,
        terms: { amount: '20000', payTo: PAY_TO, asset: BASE_USDC, network: BASE },
      }),
    );
    expect(explicit.terms_match).toMatchObject({ amount: 'mismatch', pay_to: 'match', source: 'terms' });
    expect(explicit.claim.contact).toBe(RESOURCE_URL);
    expect(prober.calls - before).toBe(1);
  });

  it('exempt keys answer with tier exempt and use no free check', async () => {
    const spot = await start();
    const key = { headers: { 'x-service-key': EXEMPT_SECRET } };
    for (let i = 0; i < 6; i++) {
      const body = await json(await post(spot, { tx_hash: TX }, key));
      expect(body.access).toEqual({ tier: 'exempt' });
    }
    // An exempt caller gets the 400 a bare request deserves, not a 402.
    expect((await json(await post(spot, {}, key))).error.code).toBe('missing_reference');
    expect((await json(await post(spot, { tx_hash: TX }))).access.free_used_today).toBe(1);
  });
});

describe('paid calls', () => {
  async function signed(spot: TestService): Promise<string> {
    const unpaid = await post(spot, {});
    const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? '');
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(BUYER));
    return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
  }

  it('settle after a successful answer and add the paid access block', async () => {
    const spot = await start();
    const before = settles.length;
    const res = await post(spot, { tx_hash: TX }, { headers: { 'payment-signature': await signed(spot) } });
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-response')).toBeTruthy();
    const body = await json(res);
    expect(body.access).toEqual({ tier: 'paid', charged_usd: '0.02', tx: SETTLE_TX });
    // A paid receipt names the settlement that paid for it.
    expect(body.receipt.access).toEqual({ tier: 'paid', charged_usd: '0.02', tx: SETTLE_TX });
    expect(settles.length - before).toBe(1);
  });

  it('settle nothing on a 400 (input checked after the payment) or a 503', async () => {
    const spot = await start();
    const before = settles.length;
    const bad = await post(
      spot,
      { tx_hash: '0x1' },
      { headers: { 'payment-signature': await signed(spot) } },
    );
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.code).toBe('bad_tx_hash');
    chainMode = 'down';
    const down = await post(spot, { tx_hash: TX }, { headers: { 'payment-signature': await signed(spot) } });
    expect(down.status).toBe(503);
    expect((await json(down)).error.code).toBe('chain_unavailable');
    expect(settles.length).toBe(before);
  });
});

describe('chainReaderFromUrls', () => {
  it('is null without URLs; names sources by host so one provider never counts as two', async () => {
    expect(chainReaderFromUrls([])).toBeNull();
    // Closed loopback ports: every source fails at once, which is all this needs to see the names.
    const reader = chainReaderFromUrls(
      ['http://127.0.0.1:1/a', 'http://127.0.0.1:1/b', 'http://localhost:1/'],
      {
        timeoutMs: 1000,
      },
    );
    const evidence = await reader?.read({
      from: BUYER.address,
      nonce: NONCE,
      txHash: null,
      validAfter: null,
      validBefore: null,
    });
    expect(evidence?.sources.map((source) => [source.name, source.ok])).toEqual([
      ['rpc-1', false],
      ['rpc-1', false],
      ['rpc-2', false],
    ]);
  });
});
