/**
 * The seller end to end: a tiny h3 app on a loopback port, the sandbox chain (anvil + Circle FiatToken at the
 * Base USDC address), the sandbox facilitator (the SDK's own, over HTTP), and the official buyer client
 * (`@x402/fetch` + `ExactEvmScheme`). Balances are read on chain.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Client } from '@x402/core/client';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { H3 } from 'h3';
import { toNodeHandler } from 'h3/node';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerFor } from '../../api/x402/offers.ts';
import { createSeller, type Offer, paidAccess, paidJson } from '../../api/x402/seller.ts';
import { type Chain, startChain } from '../../sandbox/chain.ts';
import { type Facilitator, startFacilitator } from '../../sandbox/facilitator.ts';

const PRICE = 20_000n;
let chain: Chain;
let facilitator: Facilitator;
let server: Server;
let url: string;
let offer: Offer;

beforeAll(async () => {
  chain = await startChain({ buyers: 4 });
  facilitator = await startFacilitator(chain, { clientTimeoutMs: 5_000 });
  const seller = createSeller({ facilitator: facilitator.client, payTo: chain.accounts.service.address });
  const app = new H3().get('/v1/lookup/paid', (event) =>
    seller.sell(event, offer, async () => {
      // Parameters are checked after verification and before settlement (docs/api.md §4).
      const task = new URL(event.req.url).searchParams.get('task');
      if (!task)
        return Response.json({ error: { code: 'bad_parameters', message: 'task' } }, { status: 400 });
      return paidJson((settlement) => ({ results: [], facts_only: [], access: paidAccess(settlement) }));
    }),
  );
  server = createServer(toNodeHandler(app));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  offer = offerFor('lookup', base);
  url = offer.resourceUrl;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await facilitator?.stop();
  await chain?.stop();
});

function buyer(index: number) {
  const key = chain.buyerKeys[index];
  if (!key) throw new Error(`no buyer ${index}`);
  return privateKeyToAccount(key);
}

function payingFetch(index: number) {
  return wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(buyer(index))));
}

async function balances(index: number) {
  return {
    service: await chain.balanceOf(chain.accounts.service.address),
    buyer: await chain.balanceOf(buyer(index).address),
  };
}

/** One signed PAYMENT-SIGNATURE value for the seller's current 402. */
async function signOnce(index: number): Promise<string> {
  const unpaid = await fetch(`${url}?task=weather`);
  const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') ?? '');
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(buyer(index)));
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

describe('x402 seller on the sandbox', () => {
  it('is paid by the official client: 200, a successful settlement on chain, exactly the price moved', async () => {
    const before = await balances(0);
    const response = await payingFetch(0)(`${url}?task=weather`);
    expect(response.status).toBe(200);
    const receipt = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
    expect(receipt.success).toBe(true);
    const tx = receipt.transaction as `0x${string}`;
    expect((await chain.publicClient.getTransactionReceipt({ hash: tx })).status).toBe('success');
    expect((await response.json()).access).toEqual({ tier: 'paid', charged_usd: '0.02', tx });
    const after = await balances(0);
    expect(after.service - before.service).toBe(PRICE);
    expect(before.buyer - after.buyer).toBe(PRICE);
  });

  it('does not charge when the handler answers 400 for bad parameters', async () => {
    const before = await balances(1);
    const settles = facilitator.calls.settle;
    const response = await payingFetch(1)(url);
    expect(response.status).toBe(400);
    expect(facilitator.calls.settle).toBe(settles);
    expect(await balances(1)).toEqual(before);
  });

  it('refuses a replayed PAYMENT-SIGNATURE with 402; the money moves once', async () => {
    const before = await balances(2);
    const header = await signOnce(2);
    const first = await fetch(`${url}?task=weather`, { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(first.status).toBe(200);
    const replay = await fetch(`${url}?task=weather`, { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(replay.status).toBe(402);
    expect(replay.headers.get('PAYMENT-RESPONSE')).toBeNull();
    // A seller with no memory of the payment (another process, a restart): the facilitator refuses the used nonce.
    const fresh = createSeller({ facilitator: facilitator.client, payTo: chain.accounts.service.address });
    const request = new Request(`${url}?task=weather`, { headers: { 'PAYMENT-SIGNATURE': header } });
    const elsewhere = await fresh.sell({ req: request }, offer, async () => paidJson(() => ({})));
    expect(elsewhere.status).toBe(402);
    expect(decodePaymentRequiredHeader(elsewhere.headers.get('PAYMENT-REQUIRED') ?? '').error).toBe(
      'invalid_exact_evm_nonce_already_used',
    );
    const after = await balances(2);
    expect(after.service - before.service).toBe(PRICE);
    expect(before.buyer - after.buyer).toBe(PRICE);
  });

  it('answers 502 facilitator_unavailable with the facilitator down, and nothing moves', async () => {
    const before = await balances(3);
    facilitator.setMode('down');
    try {
      const response = await payingFetch(3)(`${url}?task=weather`);
      expect(response.status).toBe(502);
      expect(await response.json()).toMatchObject({ error: { code: 'facilitator_unavailable' } });
    } finally {
      facilitator.setMode('ok');
    }
    expect(await balances(3)).toEqual(before);
  });

  it('still answers the unpaid 402 with the facilitator down', async () => {
    facilitator.setMode('down');
    try {
      const response = await fetch(`${url}?task=weather`);
      expect(response.status).toBe(402);
      expect(
        decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED') ?? '').accepts[0]?.payTo,
      ).toBe(chain.accounts.service.address);
    } finally {
      facilitator.setMode('ok');
    }
  });

  it('accepts an x402 v1 payload in X-PAYMENT and answers X-PAYMENT-RESPONSE with a landed transaction', async () => {
    const before = await balances(3);
    const unpaid = decodePaymentRequiredHeader((await fetch(url)).headers.get('PAYMENT-REQUIRED') ?? '');
    const accept = unpaid.accepts[0]!;
    const v1Requirements = {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: accept.amount,
      resource: url,
      description: offer.description,
      mimeType: 'application/json',
      outputSchema: {},
      payTo: accept.payTo,
      maxTimeoutSeconds: accept.maxTimeoutSeconds,
      asset: accept.asset,
      extra: accept.extra,
    };
    // The v1 client is typed with the v2 requirements shape and reads the v1 fields at run time.
    const payload = await new ExactEvmSchemeV1(buyer(3)).createPaymentPayload(
      1,
      v1Requirements as unknown as PaymentRequirements,
    );
    const header = Buffer.from(JSON.stringify(payload)).toString('base64');
    const response = await fetch(`${url}?task=weather`, { headers: { 'X-PAYMENT': header } });
    expect(response.status).toBe(200);
    const receipt = decodePaymentResponseHeader(response.headers.get('X-PAYMENT-RESPONSE') ?? '');
    const tx = receipt.transaction as `0x${string}`;
    expect((await chain.publicClient.getTransactionReceipt({ hash: tx })).status).toBe('success');
    expect((await balances(3)).service - before.service).toBe(PRICE);
  });
});
