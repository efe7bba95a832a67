import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { FacilitatorTimeoutError, HTTPFacilitatorClient } from '@x402/core/http';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chain, startChain } from '../../../sandbox/chain.ts';
import { type Facilitator, startFacilitator } from '../../../sandbox/facilitator.ts';
import { fiatTokenAbi } from '../../../sandbox/fiat-token.ts';
import { readWorldState, startWorld } from '../../../sandbox/world.ts';

let chain: Chain;
let facilitator: Facilitator;

beforeAll(async () => {
  chain = await startChain();
  facilitator = await startFacilitator(chain);
});
afterAll(async () => {
  await facilitator?.stop();
  await chain?.stop();
});

function requirements(overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '10000',
    asset: chain.usdc,
    payTo: chain.accounts.service.address,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
    ...overrides,
  };
}

async function pay(buyer: number, accepted = requirements()) {
  const client = new x402Client().register('eip155:8453', new ExactEvmScheme(chain.accounts.buyers[buyer]!));
  return client.createPaymentPayload({
    x402Version: 2,
    resource: { url: 'http://seller.test/weather' },
    accepts: [accepted],
  });
}

const nonceOf = (payload: { payload: Record<string, unknown> }) => {
  const authorization = payload.payload['authorization'] as { nonce: `0x${string}`; from: `0x${string}` };
  return authorization;
};

describe('sandbox facilitator over HTTP', () => {
  it('lists exact on eip155:8453 (v2) and base (v1) with the relayer as signer', async () => {
    const supported = await facilitator.client.getSupported();
    expect(supported.kinds).toEqual(
      expect.arrayContaining([
        { x402Version: 2, scheme: 'exact', network: 'eip155:8453' },
        { x402Version: 1, scheme: 'exact', network: 'base' },
      ]),
    );
    expect(supported.kinds).toHaveLength(2);
    expect(Object.values(supported.signers).flat()).toContain(chain.accounts.relayer.address);
    expect(facilitator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('verifies and settles an SDK-built payment, moving exactly the amount on chain', async () => {
    const payload = await pay(0);
    const service = chain.accounts.service.address;
    const serviceBefore = await chain.balanceOf(service);
    const settlesBefore = facilitator.calls.settle;

    const verified = await facilitator.client.verify(payload, requirements());
    expect(verified).toMatchObject({ isValid: true, payer: chain.accounts.buyers[0]!.address });

    const settled = await facilitator.client.settle(payload, requirements());
    expect(settled).toMatchObject({
      success: true,
      network: 'eip155:8453',
      payer: chain.accounts.buyers[0]!.address,
    });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await chain.publicClient.getTransactionReceipt({
      hash: settled.transaction as `0x${string}`,
    });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(chain.accounts.relayer.address.toLowerCase());
    expect(await chain.balanceOf(service)).toBe(serviceBefore + 10_000n);
    expect(facilitator.calls.settle).toBe(settlesBefore + 1);

    const { from, nonce } = nonceOf(payload);
    const used = await chain.publicClient.readContract({
      address: chain.usdc,
      abi: fiatTokenAbi,
      functionName: 'authorizationState',
      args: [from, nonce],
    });
    expect(used).toBe(true);
  });

  it('refuses a replayed payload with the precise nonce reason and moves nothing', async () => {
    const payload = await pay(1);
    expect((await facilitator.client.settle(payload, requirements())).success).toBe(true);
    const balance = await chain.balanceOf(chain.accounts.service.address);

    const again = await facilitator.client.verify(payload, requirements());
    expect(again).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
    const resettle = await facilitator.client.settle(payload, requirements());
    expect(resettle).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
    expect(await chain.balanceOf(chain.accounts.service.address)).toBe(balance);
  });

  it('rejects a payload checked against different requirements', async () => {
    const payload = await pay(2);
    const other = requirements({ amount: '20000' });
    const verified = await facilitator.client.verify(payload, other);
    expect(verified.isValid).toBe(false);
    expect(verified.invalidReason).toMatch(/^invalid_exact_evm_/);
  });

  it('settles an x402 v1 payment on network "base"', async () => {
    const v1 = {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '5000',
      resource: 'http://seller.test/v1',
      description: 'v1 route',
      mimeType: 'application/json',
      outputSchema: {},
      payTo: chain.accounts.service.address,
      maxTimeoutSeconds: 300,
      asset: chain.usdc,
      extra: { name: 'USD Coin', version: '2' },
    };
    const client = new x402Client().registerV1('base', new ExactEvmSchemeV1(chain.accounts.buyers[2]!));
    // The SDK types its client and facilitator entry points with the v2 shapes and dispatches v1 objects at run
    // time on `x402Version`, so the v1 objects are passed through those types here.
    const required = { x402Version: 1, accepts: [v1] } as unknown as PaymentRequired;
    const payload = await client.createPaymentPayload(required);
    expect(payload.x402Version).toBe(1);
    const before = await chain.balanceOf(chain.accounts.service.address);
    const settled = await facilitator.client.settle(payload, v1 as unknown as PaymentRequirements);
    expect(settled.success).toBe(true);
    expect(await chain.balanceOf(chain.accounts.service.address)).toBe(before + 5000n);
  });

  it('answers 400 JSON to bad JSON and to a body that is not a verify request', async () => {
    const badJson = await fetch(`${facilitator.url}/verify`, { method: 'POST', body: '{not json' });
    expect(badJson.status).toBe(400);
    expect(badJson.headers.get('content-type')).toBe('application/json');
    expect(await badJson.json()).toMatchObject({ error: { code: 'bad_json' } });

    const wrongShape = await fetch(`${facilitator.url}/settle`, {
      method: 'POST',
      body: '{"x402Version":2}',
    });
    expect(wrongShape.status).toBe(400);
    expect(await wrongShape.json()).toMatchObject({ success: false, errorReason: 'invalid_payload' });

    const unknown = await fetch(`${facilitator.url}/nope`);
    expect(unknown.status).toBe(404);
  });

  it("'down' makes HTTPFacilitatorClient throw and charges nothing; 'ok' restores it", async () => {
    const payload = await pay(0);
    const balance = await chain.balanceOf(chain.accounts.service.address);
    facilitator.setMode('down');
    try {
      await expect(facilitator.client.verify(payload, requirements())).rejects.toThrow(/503/);
      await expect(facilitator.client.settle(payload, requirements())).rejects.toThrow(/503/);
      await expect(facilitator.client.getSupported()).rejects.toThrow(/503/);
    } finally {
      facilitator.setMode('ok');
    }
    expect(await chain.balanceOf(chain.accounts.service.address)).toBe(balance);
    expect((await facilitator.client.verify(payload, requirements())).isValid).toBe(true);
  });

  it("'slow' outlasts a client timeout", async () => {
    const impatient = new HTTPFacilitatorClient({ url: facilitator.url, timeoutMs: 150 });
    facilitator.setMode('slow', { delayMs: 600 });
    try {
      await expect(impatient.getSupported()).rejects.toBeInstanceOf(FacilitatorTimeoutError);
    } finally {
      facilitator.setMode('ok');
    }
    expect((await impatient.getSupported()).kinds.length).toBeGreaterThan(0);
  });
});

describe('sandbox world', () => {
  it('writes its state file, and an SDK buyer pays an SDK seller through the sandbox facilitator', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'spotcheck-world-'));
    const statePath = join(stateDir, 'state.json');
    try {
      await worldTour(statePath);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

/** Starts the world on `statePath`, pays through it, stops it and checks nothing is left behind. */
async function worldTour(statePath: string): Promise<void> {
  const world = await startWorld({ statePath });
  try {
    const state = await readWorldState(statePath);
    expect(state).toEqual(world.state);
    expect(state.rpcUrls).toHaveLength(2);
    expect(state.rpcUrls[0]).not.toBe(state.rpcUrls[1]);
    expect(state.buyerKeys).toHaveLength(3);
    expect(state.sellers['sdk-ok']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);

    const buyer = privateKeyToAccount(state.buyerKeys[0] as `0x${string}`);
    const client = new x402Client().register('eip155:8453', new ExactEvmScheme(buyer));
    const payFetch = wrapFetchWithPayment(fetch, client);
    const before = await world.chain.balanceOf(state.sellerPayTo as `0x${string}`);
    const response = await payFetch(`${state.sellers['sdk-ok']}?city=Paris`);
    expect(response.status).toBe(200);
    const settlement = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
    expect(settlement).toMatchObject({ success: true, network: 'eip155:8453', payer: buyer.address });
    expect(await world.chain.balanceOf(state.sellerPayTo as `0x${string}`)).toBe(before + 10_000n);
    expect(world.facilitator.calls.settle).toBe(1);
  } finally {
    await world.stop();
  }
  expect(existsSync(statePath)).toBe(false);
  expect(() => process.kill(world.chain.pid!, 0)).toThrow();
}
