/**
 * Payment status end to end: the real service on a port, reading the sandbox chain (anvil with Circle's
 * FiatToken at the Base USDC address) through two RPC sources, anvil itself and the switchable RPC proxy. Payments
 * are made by the official x402 client to an SDK seller and settled by the SDK facilitator; other authorizations
 * are signed with viem and left unsubmitted or canceled. Tests run in file order: the last one moves chain time.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainReader } from '../../io/chain-reader.ts';
import {
  cancelAuthorization,
  signAuthorization,
  v1PaymentHeader,
  v2PaymentHeader,
} from '../../sandbox/eip3009.ts';
import { startWorld, type World } from '../../sandbox/world.ts';
import { verifyReceipt } from '../../verify/verify.ts';
import { startDeadPort } from '../fixtures/dead-port.ts';
import type { PaymentStatusAnswer as Answer } from '../fixtures/payment.ts';
import { EXEMPT_SECRET, startTestService, type TestService } from '../helpers/service.ts';

let world: World;
let spot: TestService;
/** RPC calls each kind of query cost, from the reader's own counters (reported by the test run). */
const measured: Record<string, number> = {};

beforeAll(async () => {
  world = await startWorld({ buyers: 3 });
  spot = await startTestService({
    RPC_URLS: world.state.rpcUrls.join(','),
    FACILITATOR_URL: world.state.facilitatorUrl,
    SERVICE_WALLET: world.state.serviceWallet,
  });
});
afterAll(async () => {
  if (Object.keys(measured).length > 0) console.info('[payment-status e2e] RPC calls per query', measured);
  await spot?.stop();
  await world?.stop();
});

const exempt = { 'x-service-key': EXEMPT_SECRET };

/** One payment-status call; `label` records its RPC cost. */
async function status(
  body: Record<string, unknown>,
  options: { label?: string; headers?: Record<string, string>; expect?: number } = {},
): Promise<Answer> {
  const reader = spot.service.deps.chain as ChainReader;
  const before = reader.stats().rpcCalls;
  const res = await fetch(`${spot.url}/v1/products/payment-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options.headers ?? exempt) },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(options.expect ?? 200);
  if (options.label) measured[options.label] = reader.stats().rpcCalls - before;
  return (await res.json()) as Answer;
}

function buyer(index: number): PrivateKeyAccount {
  const key = world.chain.buyerKeys[index];
  if (!key) throw new Error(`no buyer ${index}`);
  return privateKeyToAccount(key);
}

const headTime = async () => (await world.chain.publicClient.getBlock({ blockTag: 'latest' })).timestamp;

/** A fresh authorization of 0.01 USDC to the sellers' wallet, valid for `lifetime` seconds of chain time. */
async function sign(who: PrivateKeyAccount, lifetime: bigint) {
  return signAuthorization(who, {
    to: world.sellers.payTo,
    value: 10_000n,
    validBefore: (await headTime()) + lifetime,
  });
}

describe('a payment settled by the facilitator', () => {
  let payload = '';
  let tx = '';

  beforeAll(async () => {
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(buyer(0)))
      .onAfterPaymentCreation(async ({ paymentPayload }) => {
        payload = encodePaymentSignatureHeader(paymentPayload);
      });
    const res = await wrapFetchWithPayment(fetch, client)(world.sellers.urls['sdk-ok']);
    expect(res.status).toBe(200);
    tx = decodePaymentResponseHeader(res.headers.get('payment-response') ?? '').transaction;
  });

  it('is landed, with the settlement transaction; confirmations cross 10 as blocks are mined', async () => {
    const first = await status({ payment_payload: payload }, { label: 'landed (payload)' });
    expect(first).toMatchObject({
      type: 'payment-status',
      status: 'landed',
      reason: 'settled_onchain',
      safe_to_retry_same_payload: true,
      safe_to_resign: false,
      authorization: { from: buyer(0).address, used_onchain: true, event: 'AuthorizationUsed' },
      tx: { hash: tx, status: 'success', transfer: { from: buyer(0).address, value: '10000' } },
      terms_match: { amount: 'match', pay_to: 'match', asset: 'match', network: 'match' },
      finality: { min_confirmations: 10, reorg_safe: false },
      rpc: { sources_agreed: 2 },
    });
    expect(first.rpc.sources.map((s) => s.name)).toEqual(['rpc-1', 'rpc-2']);
    expect(first.finality.confirmations).toBeLessThan(10);

    await world.chain.mine(10);
    const later = await status({ tx_hash: tx }, { label: 'landed (tx_hash)' });
    expect(later).toMatchObject({ status: 'landed', tx: { hash: tx }, finality: { reorg_safe: true } });
    expect(later.finality.confirmations).toBeGreaterThanOrEqual(10);
  });

  it('compares with the live 402 of seller_url: a match for the seller paid, a mismatch for another', async () => {
    const same = await status({ payment_payload: payload, seller_url: world.sellers.urls['sdk-ok'] });
    expect(same.terms_match).toEqual({
      amount: 'match',
      pay_to: 'match',
      asset: 'match',
      network: 'match',
      source: 'seller_challenge',
      compared: 'authorization',
    });
    expect(same.claim).toMatchObject({ seller_url: world.sellers.urls['sdk-ok'], receipt: same.receipt_url });
    const other = await status({ payment_payload: payload, seller_url: world.sellers.urls['sdk-expensive'] });
    expect(other.terms_match).toMatchObject({ amount: 'mismatch', source: 'seller_challenge' });
  });

  it('is unknown, never safe to re-sign, when a source lies about the nonce', async () => {
    world.rpcProxy.setMode('lie');
    try {
      const body = await status({ payment_payload: payload }, { label: 'landed, one source lying' });
      expect(body).toMatchObject({ status: 'unknown', reason: 'sources_disagree', safe_to_resign: false });
    } finally {
      world.rpcProxy.setMode('ok');
    }
  });

  it('gives a ps- receipt that is served at its URL and verifies with the published keys', async () => {
    const body = await status({ tx_hash: tx });
    const served = (await (await fetch(`${spot.url}/v1/receipts/${body.id}`)).json()) as Answer['receipt'];
    expect(served).toEqual(body.receipt);
    expect(served).toMatchObject({ id: body.id, type: 'payment-status', status: 'landed' });
    const jwks = await (await fetch(`${spot.url}/.well-known/jwks.json`)).json();
    expect(await verifyReceipt(served, jwks)).toEqual({ ok: true, kid: served.kid });
    expect(await verifyReceipt({ ...served, safe_to_resign: true }, jwks)).toMatchObject({ ok: false });
  });
});

describe('an authorization that was canceled', () => {
  it('is canceled', async () => {
    const { auth, signature } = await sign(buyer(1), 300n);
    const hash = await cancelAuthorization(world.chain, buyer(1), auth);
    await world.chain.publicClient.waitForTransactionReceipt({ hash });
    const body = await status({ payment_payload: v2PaymentHeader(auth, signature) }, { label: 'canceled' });
    expect(body).toMatchObject({
      status: 'canceled',
      reason: 'canceled_onchain',
      safe_to_resign: false,
      authorization: { used_onchain: true, event: 'AuthorizationCanceled' },
    });
  });
});

describe('input through the HTTP route', () => {
  const ADDR = '0x1111111111111111111111111111111111111111';
  const NONCE = `0x${'7a'.repeat(32)}`;
  it.each([
    [{ client: 'a' }, 'missing_reference'],
    [{ payment_payload: 'not-a-payload' }, 'bad_payload'],
    [{ from: '0x1', nonce: NONCE }, 'bad_from'],
    [{ from: ADDR, nonce: '0x1' }, 'bad_nonce'],
    [{ tx_hash: '0x1' }, 'bad_tx_hash'],
    [{ nonce: NONCE }, 'inconsistent'],
    [{ tx_hash: NONCE, network: 'eip155:1' }, 'unsupported_network'],
    [{ tx_hash: NONCE, asset: ADDR }, 'unsupported_asset'],
    [{ tx_hash: NONCE, seller_url: 'file:///etc/passwd' }, 'bad_seller_url'],
    [{ tx_hash: 1 }, 'bad_body'],
  ])('%j → 400 %s', async (body, code) => {
    const answer = await status(body, { headers: { 'x-forwarded-for': '192.0.2.40' }, expect: 400 });
    expect(answer.error.code).toBe(code);
  });

  it('a bare request answers 402, a body that is not JSON 400 bad_body', async () => {
    expect((await fetch(`${spot.url}/v1/products/payment-status`)).status).toBe(402);
    const res = await fetch(`${spot.url}/v1/products/payment-status`, { method: 'POST', body: '{' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Answer).error.code).toBe('bad_body');
  });
});

describe('when no chain source answers', () => {
  it('answers 503 chain_unavailable and uses no free check', async () => {
    const sources = [await startDeadPort(), await startDeadPort()];
    const dead = await startTestService({
      RPC_URLS: sources.map((source) => source.url).join(','),
      FACILITATOR_URL: world.state.facilitatorUrl,
    });
    try {
      const { auth, signature } = await sign(buyer(2), 300n);
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${dead.url}/v1/products/payment-status`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.50' },
          body: JSON.stringify({ payment_payload: v2PaymentHeader(auth, signature) }),
        });
        // A sixth 503, not a 402: none of the five free checks was used.
        expect(res.status).toBe(503);
        expect(((await res.json()) as Answer).error.code).toBe('chain_unavailable');
      }
      // Both sources were really asked, and really dropped the connection.
      for (const source of sources) expect(source.connections()).toBeGreaterThan(0);
    } finally {
      await dead.stop();
      await Promise.all(sources.map((source) => source.close()));
    }
  });
});

describe('an authorization that was never submitted (moves chain time: keep last)', () => {
  it('is pending until validBefore + 120 s, then not_landed and safe to re-sign (v1 and v2 payloads)', async () => {
    const { auth, signature } = await sign(buyer(2), 60n);
    const v2 = v2PaymentHeader(auth, signature);
    const v1 = v1PaymentHeader(auth, signature);
    const waitUntil = new Date(Number(auth.validBefore + 120n) * 1000).toISOString();
    for (const payment_payload of [v2, v1]) {
      const body = await status({ payment_payload }, { label: 'pending' });
      expect(body).toMatchObject({
        status: 'pending',
        reason: 'unused_not_expired',
        safe_to_resign: false,
        wait_until: waitUntil,
        authorization: { from: auth.from, nonce: auth.nonce, used_onchain: false, expired: false },
      });
    }
    const pair = { from: auth.from, nonce: auth.nonce, valid_before: auth.validBefore.toString() };
    expect((await status(pair, { label: 'pending (from, nonce)' })).status).toBe('pending');

    await world.chain.increaseTime(Number(auth.validBefore - (await headTime())) + 121);

    // A lagging source has not seen the chain pass the deadline: still not safe.
    world.rpcProxy.setMode('lag', { lagBlocks: 5 });
    const lagging = await status({ payment_payload: v2 }, { label: 'expired, one source lagging' });
    expect(lagging).toMatchObject({ safe_to_resign: false, status: 'pending' });
    // One source down: answered from the other, which alone may not make re-signing safe.
    world.rpcProxy.setMode('down');
    const single = await status({ payment_payload: v2 }, { label: 'expired, one source down' });
    expect(single).toMatchObject({ status: 'unknown', reason: 'single_source', safe_to_resign: false });
    expect(single.rpc.sources).toEqual([
      { name: 'rpc-1', ok: true, head: expect.any(Number) },
      { name: 'rpc-2', ok: false, head: null },
    ]);
    world.rpcProxy.setMode('ok');

    for (const payment_payload of [v2, v1]) {
      const body = await status({ payment_payload }, { label: 'not_landed' });
      expect(body).toMatchObject({
        status: 'not_landed',
        reason: 'expired_unused',
        safe_to_resign: true,
        wait_until: null,
        authorization: { used_onchain: false, expired: true },
        rpc: { sources_agreed: 2 },
      });
    }
  });
});
