import { createPublicClient, getAddress, http, type PublicClient, parseAbi } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_MNEMONIC, type Chain, localBase, startChain } from '../../../sandbox/chain.ts';
import { signAuthorization, submitAuthorization } from '../../../sandbox/eip3009.ts';
import { fiatTokenAbi, MULTICALL3_ADDRESS } from '../../../sandbox/fiat-token.ts';
import { startRpcProxy } from '../../../sandbox/rpc-proxy.ts';

const domainAbi = parseAbi(['function DOMAIN_SEPARATOR() view returns (bytes32)']);

let chain: Chain;
let startMs = 0;

beforeAll(async () => {
  const started = performance.now();
  chain = await startChain();
  startMs = performance.now() - started;
});
afterAll(async () => {
  await chain?.stop();
});

/** Buyer `buyer` (default 0) signs a transfer of `value` to the service wallet. */
function authorize(options: { value: bigint; validBefore: bigint; buyer?: number }) {
  const buyer = chain.accounts.buyers[options.buyer ?? 0]!;
  return signAuthorization(buyer, {
    to: chain.accounts.service.address,
    value: options.value,
    validBefore: options.validBefore,
  });
}

async function chainNow(): Promise<bigint> {
  return (await chain.publicClient.getBlock()).timestamp;
}

describe('startChain', () => {
  it('starts within 15 s on chain id 8453 (the measured time is logged)', async () => {
    // Alone it starts in well under 2 s; 15 s leaves room for 2 shared cores busy with parallel forks.
    console.log(`[chain] startChain took ${Math.round(startMs)} ms`);
    expect(startMs).toBeGreaterThan(0);
    expect(startMs).toBeLessThan(15_000);
    expect(await chain.publicClient.getChainId()).toBe(8453);
    expect(chain.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('places FiatToken at the Base USDC address with the real token metadata and domain', async () => {
    expect(chain.usdc).toBe('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
    const read = <const F extends 'name' | 'symbol' | 'version' | 'decimals'>(functionName: F) =>
      chain.publicClient.readContract({ address: chain.usdc, abi: fiatTokenAbi, functionName });
    expect(await read('name')).toBe('USD Coin');
    expect(await read('symbol')).toBe('USDC');
    expect(await read('version')).toBe('2');
    expect(await read('decimals')).toBe(6);
    // The mainnet domain separator (docs/x402.md §3.1): signatures made here are byte-identical to Base's.
    const separator = await chain.publicClient.readContract({
      address: chain.usdc,
      abi: domainAbi,
      functionName: 'DOMAIN_SEPARATOR',
    });
    expect(separator).toBe('0x02fa7265e7c5d81118673727957699e4d68f74cd74b7db77da710fe8a2c7834f');
  });

  it('derives the anvil mnemonic accounts in the agreed roles and funds three buyers with 100 USDC', async () => {
    expect(chain.accounts.admin.address).toBe(getAddress('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'));
    expect(chain.accounts.relayer.address).toBe(
      mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 1 }).address,
    );
    expect(chain.accounts.service.address).toBe(
      mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 2 }).address,
    );
    expect(chain.accounts.buyers).toHaveLength(3);
    expect(chain.buyerKeys).toHaveLength(3);
    expect(chain.accounts.buyers[0]!.address).toBe(
      mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 3 }).address,
    );
    for (const buyer of chain.accounts.buyers) {
      expect(await chain.balanceOf(buyer.address)).toBe(100_000_000n);
      expect(await chain.publicClient.getBalance({ address: buyer.address })).toBe(0n);
    }
    expect(await chain.publicClient.getBalance({ address: chain.accounts.relayer.address })).toBeGreaterThan(
      0n,
    );
  });

  it('has Multicall3 at its canonical address', async () => {
    expect(chain.multicall3).toBe(true);
    const code = await chain.publicClient.getCode({ address: MULTICALL3_ADDRESS });
    expect(code?.length ?? 0).toBeGreaterThan(1000);
  });

  it('mints on request and moves time with increaseTime', async () => {
    const service = chain.accounts.service.address;
    const before = await chain.balanceOf(service);
    await chain.mint(service, 1234n);
    expect(await chain.balanceOf(service)).toBe(before + 1234n);

    const t0 = await chainNow();
    const b0 = await chain.publicClient.getBlockNumber();
    await chain.increaseTime(3600);
    expect(await chainNow()).toBeGreaterThanOrEqual(t0 + 3600n);
    expect(await chain.publicClient.getBlockNumber()).toBe(b0 + 1n);
    await chain.mine(3);
    expect(await chain.publicClient.getBlockNumber()).toBe(b0 + 4n);
  });
});

describe('EIP-3009 TransferWithAuthorization on the local USDC', () => {
  it('settles a buyer-signed authorization submitted by the relayer and refuses its replay', async () => {
    const buyer = chain.accounts.buyers[1]!.address;
    const service = chain.accounts.service.address;
    const { auth, signature } = await authorize({
      value: 10_000n,
      validBefore: (await chainNow()) + 300n,
      buyer: 1,
    });
    const state = () =>
      chain.publicClient.readContract({
        address: chain.usdc,
        abi: fiatTokenAbi,
        functionName: 'authorizationState',
        args: [buyer, auth.nonce],
      });
    const serviceBefore = await chain.balanceOf(service);
    expect(await state()).toBe(false);

    const hash = await submitAuthorization(chain, auth, signature);
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(await state()).toBe(true);
    expect(await chain.balanceOf(buyer)).toBe(100_000_000n - 10_000n);
    expect(await chain.balanceOf(service)).toBe(serviceBefore + 10_000n);

    const logs = await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: fiatTokenAbi,
      eventName: 'AuthorizationUsed',
      args: { authorizer: buyer, nonce: auth.nonce },
      fromBlock: receipt.blockNumber,
    });
    expect(logs.map((log) => log.transactionHash)).toEqual([hash]);

    await expect(submitAuthorization(chain, auth, signature)).rejects.toThrow(
      /authorization is used or canceled/,
    );
    expect(await chain.balanceOf(service)).toBe(serviceBefore + 10_000n);
  });

  it('rejects an authorization once chain time has passed validBefore', async () => {
    const { auth, signature } = await authorize({
      value: 1n,
      validBefore: (await chainNow()) + 60n,
      buyer: 2,
    });
    await chain.increaseTime(120);
    await expect(submitAuthorization(chain, auth, signature)).rejects.toThrow(/authorization is expired/);
  });
});

describe('rpc proxy (the second chain source)', () => {
  it('passes calls through, then goes down, lags and lies on request', async () => {
    const proxy = await startRpcProxy(chain.rpcUrl);
    const client = createPublicClient({
      chain: localBase(proxy.url),
      transport: http(proxy.url, { retryCount: 0 }),
      cacheTime: 0,
    });
    try {
      // A settled authorization, so `authorizationState` is true on the real chain.
      const { auth, signature } = await authorize({
        value: 7n,
        validBefore: (await chainNow()) + 300n,
        buyer: 0,
      });
      const receipt = await chain.publicClient.waitForTransactionReceipt({
        hash: await submitAuthorization(chain, auth, signature),
      });
      const stateVia = (c: PublicClient) =>
        c.readContract({
          address: chain.usdc,
          abi: fiatTokenAbi,
          functionName: 'authorizationState',
          args: [auth.from, auth.nonce],
        });

      const head = await chain.publicClient.getBlockNumber();
      expect(await client.getBlockNumber()).toBe(head);
      expect(await stateVia(client)).toBe(true);
      expect(proxy.requests).toBeGreaterThanOrEqual(2);

      proxy.setMode('down');
      await expect(client.getBlockNumber()).rejects.toThrow();

      proxy.setMode('lag', { lagBlocks: 3 });
      await chain.mine(3);
      expect(await client.getBlockNumber()).toBe(head);
      expect((await client.getBlock()).number).toBe(head);
      // The settlement block is the head before mining, so it is still visible; the newer blocks are not.
      expect(await client.getBlock({ blockNumber: head + 1n }).catch(() => null)).toBeNull();
      proxy.setMode('lag', { lagBlocks: 4 });
      expect(await stateVia(client)).toBe(false);
      await expect(client.getTransactionReceipt({ hash: receipt.transactionHash })).rejects.toThrow();
      const logs = await client.getContractEvents({
        address: chain.usdc,
        abi: fiatTokenAbi,
        eventName: 'AuthorizationUsed',
        args: { authorizer: auth.from, nonce: auth.nonce },
        fromBlock: receipt.blockNumber,
      });
      expect(logs).toEqual([]);

      proxy.setMode('lie');
      expect(await stateVia(client)).toBe(false);
      expect(await stateVia(chain.publicClient)).toBe(true);
      expect(await client.getBlockNumber()).toBe(head + 3n);

      proxy.setMode('ok');
      expect(await stateVia(client)).toBe(true);
    } finally {
      await proxy.stop();
    }
  });
});

describe('stop', () => {
  it('ends the anvil process and frees its port', async () => {
    const extra = await startChain({ buyers: 1, fundEach: 5n });
    expect(await extra.balanceOf(extra.accounts.buyers[0]!.address)).toBe(5n);
    const pid = extra.pid!;
    expect(() => process.kill(pid, 0)).not.toThrow();
    await extra.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    await expect(fetch(extra.rpcUrl, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
