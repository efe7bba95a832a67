/**
 * The run wallets on the sandbox chain (anvil with the real FiatToken): a wallet per run, derived from the payer's
 * key and never showing it; funding is one USDC transfer that lands at most once however often it is sent again,
 * and a funding whose nonce went to another transaction is reported dropped, not waited on forever.
 */
import { createHmac } from 'node:crypto';
import { parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunWallets, runAccount } from '../../io/runs/wallet.ts';
import { type Chain, startChain } from '../../sandbox/chain.ts';

let chain: Chain;

beforeAll(async () => {
  chain = await startChain({ buyers: 2 });
  for (const buyer of chain.accounts.buyers)
    await chain.testClient.setBalance({ address: buyer.address, value: parseEther('1') });
});
afterAll(() => chain?.stop());

const key = (i: number) => chain.buyerKeys[i] as `0x${string}`;

describe('run wallets', () => {
  it('derives one wallet per run from the payer key, never the payer, never showing a key', () => {
    const payer = privateKeyToAccount(key(0));
    const a = runAccount(key(0), '20261124T010000Z-0001');
    expect(runAccount(key(0), '20261124T010000Z-0001').address).toBe(a.address);
    expect(runAccount(key(0), '20261124T010000Z-0002').address).not.toBe(a.address);
    expect(runAccount(key(1), '20261124T010000Z-0001').address).not.toBe(a.address);
    expect(a.address).not.toBe(payer.address);
    const wallets = createRunWallets({ payerKey: key(0), rpcUrl: chain.rpcUrl });
    expect(wallets.address('20261124T010000Z-0001')).toBe(a.address);
    const shown = JSON.stringify({
      a,
      wallets,
      payer: wallets.payer('20261124T010000Z-0001', { limit: 1n, committed: 0n }),
    });
    expect(shown).not.toContain(key(0).slice(2));
    // The run's own key, computed here the way the module derives it, is not shown either.
    const derived = createHmac('sha256', Buffer.from(key(0).slice(2), 'hex'))
      .update('spotcheck known-answers run wallet v1\n20261124T010000Z-0001\n0')
      .digest('hex');
    expect(privateKeyToAccount(`0x${derived}`).address).toBe(a.address);
    expect(shown).not.toContain(derived);
  });

  it('funds a run wallet once, however often the signed transfer is sent again', async () => {
    const payer = chain.accounts.buyers[0]?.address as `0x${string}`;
    const wallets = createRunWallets({ payerKey: key(0), rpcUrl: chain.rpcUrl });
    const before = await chain.balanceOf(payer);
    const signed = await wallets.signFunding('20261124T020000Z-00aa', 250_000n);
    expect(await chain.balanceOf(signed.to)).toBe(0n);
    expect(await wallets.sendFunding(signed)).toEqual({ kind: 'landed' });
    // A resume after a crash sends the journaled transaction again: same nonce, nothing moves twice.
    expect(await wallets.sendFunding(signed)).toEqual({ kind: 'landed' });
    expect(await createRunWallets({ payerKey: key(0), rpcUrl: chain.rpcUrl }).sendFunding(signed)).toEqual({
      kind: 'landed',
    });
    expect(await chain.balanceOf(signed.to)).toBe(250_000n);
    expect(before - (await chain.balanceOf(payer))).toBe(250_000n);
  });

  it('reports a funding dropped when its nonce went to another transaction', async () => {
    const payer = chain.accounts.buyers[1]?.address as `0x${string}`;
    const wallets = createRunWallets({ payerKey: key(1), rpcUrl: chain.rpcUrl });
    const stale = await wallets.signFunding('20261124T030000Z-00bb', 100_000n);
    // The operator used the payer elsewhere first: the same nonce, another transaction.
    const other = await wallets.signFunding('20261124T030000Z-00cc', 1n);
    expect(await wallets.sendFunding(other)).toEqual({ kind: 'landed' });
    expect(await wallets.sendFunding(stale)).toEqual({ kind: 'dropped' });
    expect(await chain.balanceOf(stale.to)).toBe(0n);
    const fresh = await wallets.signFunding('20261124T030000Z-00bb', 100_000n);
    expect(await wallets.sendFunding(fresh)).toEqual({ kind: 'landed' });
    expect(await chain.balanceOf(fresh.to)).toBe(100_000n);
    expect(await chain.balanceOf(payer)).toBe(100_000_000n - 100_001n);
  });

  it('needs an RPC URL only to fund', async () => {
    const wallets = createRunWallets({ payerKey: key(0), rpcUrl: null });
    expect(wallets.address('20261124T040000Z-0001')).toMatch(/^0x[0-9a-fA-F]{40}$/);
    await expect(wallets.signFunding('20261124T040000Z-0001', 1n)).rejects.toThrow(/RPC_URLS/);
  });
});
