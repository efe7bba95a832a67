/**
 * The chain reader and the payment status rules against a real FiatTokenV2_2 on anvil (sandbox/chain.ts):
 * a buyer signs EIP-3009 authorizations, the relayer submits or cancels them, and time moves with anvil.
 */

import type { Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaymentStatusQuery, parsePaymentStatusInput } from '../../core/payment-input.ts';
import { decidePaymentStatus, noSourceAnswered } from '../../core/payment-status.ts';
import { createChainReader, eip3009Abi } from '../../io/chain-reader.ts';
import { type Chain, startChain } from '../../sandbox/chain.ts';
import {
  type Authorization,
  cancelAuthorization,
  signAuthorization,
  submitAuthorization,
  v2PaymentHeader,
} from '../../sandbox/eip3009.ts';
import { type DeadPort, startDeadPort } from '../fixtures/dead-port.ts';

let chain: Chain;
let dead: DeadPort;
let deadUrl: string;

beforeAll(async () => {
  chain = await startChain({ buyers: 1 });
  dead = await startDeadPort();
  deadUrl = dead.url;
});

afterAll(async () => {
  await chain?.stop();
  await dead?.close();
});

const twoSources = () =>
  createChainReader({
    // Two clients over two URLs of the same node: independent clients, as production has independent providers.
    sources: [
      { name: 'primary', url: chain.rpcUrl },
      { name: 'secondary', url: chain.rpcUrl.replace('127.0.0.1', 'localhost') },
    ],
    usdc: chain.usdc,
    timeoutMs: 2000,
  });

function buyer(): PrivateKeyAccount {
  const account = chain.accounts.buyers[0];
  if (account === undefined) throw new Error('sandbox has no buyer');
  return account;
}

async function headTime(): Promise<bigint> {
  return (await chain.publicClient.getBlock({ blockTag: 'latest' })).timestamp;
}

/** A fresh authorization of 0.01 USDC to the service wallet, valid for `lifetime` seconds of chain time. */
async function sign(lifetime: bigint) {
  return signAuthorization(buyer(), {
    to: chain.accounts.service.address,
    value: 10_000n,
    validBefore: (await headTime()) + lifetime,
  });
}

/** The v2 PAYMENT-SIGNATURE value a buyer would have sent, through the real input parser. */
function queryOf(auth: Authorization, signature: Hex): PaymentStatusQuery {
  const parsed = parsePaymentStatusInput({ payment_payload: v2PaymentHeader(auth, signature) });
  if (!parsed.ok) throw new Error(`payload refused: ${parsed.code}`);
  return parsed.value;
}

describe('chain reader on anvil', () => {
  it('finds a settled authorization, and its confirmations grow with new blocks', async () => {
    const { auth, signature } = await sign(300n);
    const hash = await submitAuthorization(chain, auth, signature);
    const mined = await chain.publicClient.waitForTransactionReceipt({ hash });
    expect(mined.status).toBe('success');

    const reader = twoSources();
    const query = queryOf(auth, signature);
    const evidence = await reader.read(query);
    for (const source of evidence.sources) {
      expect(source).toMatchObject({
        ok: true,
        nonceUsed: true,
        usedLog: { txHash: hash },
        canceledLog: null,
      });
      expect(source.receipt?.transfer).toEqual({ from: auth.from, to: auth.to, value: 10_000n });
    }
    const first = decidePaymentStatus({ query, evidence, termsExpected: null });
    expect(first).toMatchObject({
      status: 'landed',
      reason: 'settled_onchain',
      safe_to_resign: false,
      tx: { hash, status: 'success', transfer: { value: '10000' } },
      finality: { confirmations: 1, reorg_safe: false },
      terms_match: { amount: 'match', pay_to: 'match', asset: 'match', network: 'match' },
      rpc: { sources_agreed: 2 },
    });
    // head, authorizationState, eth_getLogs, receipt: four calls per source.
    expect(reader.stats()).toEqual({ queries: 1, rpcCalls: 8 });

    await chain.mine(9);
    const later = decidePaymentStatus({ query, evidence: await reader.read(query), termsExpected: null });
    expect(later.finality).toEqual({ confirmations: 10, min_confirmations: 10, reorg_safe: true });

    // tx_hash alone: the authorization is recovered from the receipt's AuthorizationUsed log.
    const byHash = parsePaymentStatusInput({ tx_hash: hash });
    if (!byHash.ok) throw new Error(byHash.code);
    const fromTx = decidePaymentStatus({
      query: byHash.value,
      evidence: await reader.read(byHash.value),
      termsExpected: null,
    });
    expect(fromTx).toMatchObject({ status: 'landed', authorization: { from: auth.from, nonce: auth.nonce } });
  });

  it('is pending while the authorization can settle, then not_landed and safe to re-sign', async () => {
    const { auth, signature } = await sign(60n);
    const query = queryOf(auth, signature);
    const reader = twoSources();

    const before = decidePaymentStatus({ query, evidence: await reader.read(query), termsExpected: null });
    expect(before).toMatchObject({
      status: 'pending',
      safe_to_resign: false,
      authorization: { expired: false },
    });
    expect(before.wait_until).toBe(new Date(Number(auth.validBefore + 120n) * 1000).toISOString());

    await chain.increaseTime(60 + 121);
    const after = decidePaymentStatus({ query, evidence: await reader.read(query), termsExpected: null });
    expect(after).toMatchObject({
      status: 'not_landed',
      reason: 'expired_unused',
      safe_to_resign: true,
      authorization: { used_onchain: false, expired: true },
      rpc: { sources_agreed: 2 },
    });

    // The chain agrees: the same authorization can no longer be submitted.
    await expect(
      chain.publicClient.simulateContract({
        account: chain.accounts.relayer,
        address: chain.usdc,
        abi: eip3009Abi,
        functionName: 'transferWithAuthorization',
        args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, signature],
      }),
    ).rejects.toThrow(/expired/);

    // A relayer that submits it anyway gets a reverted transaction; its hash alone still identifies the
    // authorization (from the calldata) and gives the same answer.
    const reverted = await submitAuthorization(chain, auth, signature, { gas: 300_000n });
    expect((await chain.publicClient.waitForTransactionReceipt({ hash: reverted })).status).toBe('reverted');
    const byHash = parsePaymentStatusInput({ tx_hash: reverted });
    if (!byHash.ok) throw new Error(byHash.code);
    const fromTx = decidePaymentStatus({
      query: byHash.value,
      evidence: await reader.read(byHash.value),
      termsExpected: null,
    });
    expect(fromTx).toMatchObject({
      status: 'not_landed',
      safe_to_resign: true,
      authorization: { from: auth.from, nonce: auth.nonce },
      tx: { hash: reverted, status: 'reverted', transfer: null },
    });

    // One source down: the other alone may not make re-signing safe.
    const halfDead = createChainReader({
      sources: [
        { name: 'primary', url: chain.rpcUrl },
        { name: 'dead', url: deadUrl },
      ],
      usdc: chain.usdc,
      timeoutMs: 1000,
    });
    const evidence = await halfDead.read(query);
    expect(evidence.sources[1]).toMatchObject({ name: 'dead', ok: false, head: null });
    expect(evidence.sources[1]?.error).toBeTruthy();
    expect(dead.connections()).toBeGreaterThan(0);
    expect(noSourceAnswered(evidence)).toBe(false);
    expect(decidePaymentStatus({ query, evidence, termsExpected: null })).toMatchObject({
      status: 'unknown',
      reason: 'single_source',
      safe_to_resign: false,
    });
  });

  it('reports a canceled authorization', async () => {
    const { auth, signature } = await sign(300n);
    const hash = await cancelAuthorization(chain, buyer(), auth);
    await chain.publicClient.waitForTransactionReceipt({ hash });

    const query = queryOf(auth, signature);
    const evidence = await twoSources().read(query);
    expect(evidence.sources[0]?.canceledLog?.txHash).toBe(hash);
    expect(decidePaymentStatus({ query, evidence, termsExpected: null })).toMatchObject({
      status: 'canceled',
      reason: 'canceled_onchain',
      safe_to_resign: false,
      authorization: { used_onchain: true, event: 'AuthorizationCanceled' },
    });
  });

  it('reports every source failed when no source answers', async () => {
    const { auth, signature } = await sign(300n);
    const reader = createChainReader({
      sources: [
        { name: 'dead-1', url: deadUrl },
        { name: 'dead-2', url: deadUrl.replace('127.0.0.1', 'localhost') },
      ],
      usdc: chain.usdc,
      timeoutMs: 1000,
    });
    const evidence = await reader.read(queryOf(auth, signature));
    expect(evidence.sources.map((source) => source.ok)).toEqual([false, false]);
    expect(noSourceAnswered(evidence)).toBe(true);
  });
});
