/**
 * The paid world for end-to-end tests: the sandbox (anvil with Circle's FiatToken, the SDK facilitator over HTTP,
 * the seller fleet) and the real service wired to it exactly as an operator would (FACILITATOR_URL,
 * SERVICE_WALLET, RPC_URLS), plus the official buyer client (`@x402/fetch`) and on-chain balance reads.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { erc20Abi, type Log, parseEventLogs } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { startWorld, type World, type WorldState } from '../../sandbox/world.ts';
import { startTestService, type TestService } from './service.ts';

/** A USDC transfer read from a transaction receipt. */
export type UsdcTransfer = { from: string; to: string; value: bigint };

/** A running world with the service in front of it; `stop` ends both. */
export type PaidWorld = {
  world: World;
  spot: TestService;
  /** The funded sandbox buyer `index` (100 USDC, no ETH). */
  buyer(index: number): PrivateKeyAccount;
  /** The official client for buyer `index`; `maxUsd` raises the SDK's default $1 cap per payment. */
  client(index: number, options?: { maxUsd?: string }): x402Client;
  /** `fetch` that pays 402s with the official client, as the caller at `ip` (TRUST_PROXY is on in tests). */
  payingFetch(index: number, options?: { ip?: string; maxUsd?: string }): typeof fetch;
  /** One signed `PAYMENT-SIGNATURE` value for `required`, from buyer `index`. */
  sign(index: number, required: PaymentRequired, options?: { maxUsd?: string }): Promise<string>;
  /** USDC balances of the service wallet and of buyer `index`, read on chain. */
  balances(index: number): Promise<{ service: bigint; buyer: bigint }>;
  /** The USDC `Transfer` events of a mined transaction (status must be success). */
  transfers(tx: `0x${string}`): Promise<UsdcTransfer[]>;
  stop(): Promise<void>;
};

/** The service's environment for a world: where to settle, whom to be paid, which chain sources to read. */
export function worldEnv(state: WorldState): Record<string, string> {
  return {
    FACILITATOR_URL: state.facilitatorUrl,
    SERVICE_WALLET: state.serviceWallet,
    RPC_URLS: state.rpcUrls.join(','),
  };
}

/** The USDC `Transfer` events of a mined transaction of the world's chain (it must have succeeded). */
export async function usdcTransfers(world: World, tx: `0x${string}`): Promise<UsdcTransfer[]> {
  const receipt = await world.chain.publicClient.getTransactionReceipt({ hash: tx });
  if (receipt.status !== 'success') throw new Error(`transaction ${tx} reverted`);
  const usdcLogs = receipt.logs.filter(
    (log: Log) => log.address.toLowerCase() === world.state.usdc.toLowerCase(),
  );
  return parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: usdcLogs }).map((event) => ({
    from: event.args.from,
    to: event.args.to,
    value: event.args.value,
  }));
}

/** `fetch` as the client at `ip`: the service trusts `X-Forwarded-For` in tests, so each test owns its quota. */
export function fetchFrom(ip: string): typeof fetch {
  return (input, init) => {
    const request = new Request(input, init);
    request.headers.set('x-forwarded-for', ip);
    return fetch(request);
  };
}

/** The payment requirement of a 402 (`PAYMENT-REQUIRED` header, x402 v2). */
export function requirementOf(response: Response): PaymentRequired {
  const header = response.headers.get('PAYMENT-REQUIRED');
  if (header === null) throw new Error(`no PAYMENT-REQUIRED header on a ${response.status}`);
  return decodePaymentRequiredHeader(header);
}

/** Starts the world and the service (real prober, loopback allowed by `PROBE_ALLOW_CIDRS`) on a real port. */
export async function startPaidWorld(
  options: { buyers?: number; env?: Record<string, string> } = {},
): Promise<PaidWorld> {
  const world = await startWorld({ buyers: options.buyers ?? 6 });
  let spot: TestService;
  try {
    spot = await startTestService({ ...worldEnv(world.state), ...options.env });
  } catch (error) {
    await world.stop();
    throw error;
  }
  const { chain } = world;

  const buyer = (index: number) => {
    const key = world.state.buyerKeys[index];
    if (key === undefined) throw new RangeError(`the world has no buyer ${index}`);
    return privateKeyToAccount(key as `0x${string}`);
  };
  const client = (index: number, clientOptions: { maxUsd?: string } = {}) => {
    const made = new x402Client().register('eip155:*', new ExactEvmScheme(buyer(index)));
    // docs/x402.md §5: the SDK caps each payment at $1 unless told otherwise (the setup pack costs $9).
    if (clientOptions.maxUsd !== undefined)
      made.setSpendControls({ maxAmountPerPayment: clientOptions.maxUsd });
    return made;
  };

  return {
    world,
    spot,
    buyer,
    client,
    payingFetch: (index, fetchOptions = {}) =>
      wrapFetchWithPayment(
        fetchFrom(fetchOptions.ip ?? '192.0.2.1'),
        client(index, fetchOptions.maxUsd === undefined ? {} : { maxUsd: fetchOptions.maxUsd }),
      ),
    async sign(index, required, signOptions = {}) {
      const payload = await client(index, signOptions).createPaymentPayload(required);
      return encodePaymentSignatureHeader(payload);
    },
    async balances(index) {
      return {
        service: await chain.balanceOf(world.state.serviceWallet as `0x${string}`),
        buyer: await chain.balanceOf(buyer(index).address),
      };
    },
    transfers: (tx) => usdcTransfers(world, tx),
    async stop() {
      await spot.stop();
      await world.stop();
    },
  };
}
