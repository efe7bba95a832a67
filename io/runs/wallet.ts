/**
 * The wallet a known-answer run pays from (docs/decisions.md "Known-answer calls"): derived for that run alone from
 * the configured payer's key and the run id, funded from the payer with one USDC transfer on Base for the run's
 * budget, so a seller never sees the same paying wallet in two runs. The derived key lives only in memory: it is
 * never written, logged or returned (the viem account signs without exposing it), and `--resume` derives it again.
 * The remainder stays in the run's wallet (an authorization signed in the run may still be settled until it
 * expires); the operator recovers it with the payer key and the run id.
 */
import { createHmac } from 'node:crypto';
import {
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  keccak256,
  parseTransaction,
} from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import type { Budget } from '../../core/budget.ts';
import { BASE, BASE_USDC, sameAddress } from '../../core/networks.ts';
import { createPayingClient, type PayingClient } from '../probe/paying-client.ts';

/** The network runs are funded and paid on: the check's expected network when the caller names none. */
export const FUNDING_NETWORK = BASE;

/** A signed, not yet sent, USDC transfer from the payer to a run's wallet; the raw transaction is public data. */
export type SignedFunding = { to: `0x${string}`; amount_atomic: string; tx: Hex; raw: Hex };

/** How a sent funding ended: mined with the transfer, or dropped (its nonce went to another transaction). */
export type FundingOutcome = { kind: 'landed' } | { kind: 'dropped' };

/** The wallets of known-answer runs. */
export type RunWallets = {
  /** The paying address of run `runId`. */
  address(runId: string): `0x${string}`;
  /** A paying client of run `runId`'s wallet with `budget` left. */
  payer(runId: string, budget: Budget): PayingClient;
  /** Signs the transfer of `atomic` USDC from the configured payer to run `runId`'s wallet, without sending it. */
  signFunding(runId: string, atomic: bigint): Promise<SignedFunding>;
  /**
   * Sends a signed funding (again after a crash: same nonce, so it lands at most once) and waits until it is mined;
   * throws when it reverted, moved something else, or cannot be told apart yet.
   */
  sendFunding(funding: SignedFunding): Promise<FundingOutcome>;
};

/** secp256k1's group order: a derived key must be in [1, n). */
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The account of run `runId`: HMAC-SHA256 keyed by the payer's private key over a fixed label and the run id
 * (repeated with a counter in the 2^-128 case of a value outside the curve's range). One-way: a seller that knows
 * one run's wallet learns nothing of the payer's key or another run's wallet.
 */
export function runAccount(payerKey: Hex, runId: string): PrivateKeyAccount {
  for (let counter = 0; ; counter++) {
    const mac = createHmac('sha256', Buffer.from(payerKey.slice(2), 'hex'))
      .update(`spotcheck known-answers run wallet v1\n${runId}\n${counter}`)
      .digest('hex');
    const k = BigInt(`0x${mac}`);
    if (k > 0n && k < ORDER) return privateKeyToAccount(`0x${mac}`);
  }
}

/** What {@link createRunWallets} is built over. */
export type RunWalletsOptions = {
  payerKey: Hex;
  rpcUrl: string | null;
  /** The paid requests' fetch and timeout (`io/probe/paying-client.ts`). */
  fetch?: typeof fetch;
  timeoutMs?: number;
};

/** The run wallets of the payer whose key is `payerKey`; `rpcUrl` (Base) is needed only to fund. */
export function createRunWallets(options: RunWalletsOptions): RunWallets {
  const ctx: WalletsContext = { options, payer: privateKeyToAccount(options.payerKey), accounts: new Map() };
  return {
    address: (runId) => accountOf(ctx, runId).address,
    payer: (runId, budget) =>
      createPayingClient({
        account: accountOf(ctx, runId),
        budget,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      }),
    async signFunding(runId, atomic) {
      const to = accountOf(ctx, runId).address;
      const { wallet } = fundingClients(ctx);
      const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, atomic] });
      const request = await wallet.prepareTransactionRequest({ to: BASE_USDC, data });
      const raw = await wallet.signTransaction(request);
      return { to, amount_atomic: atomic.toString(), tx: keccak256(raw), raw };
    },
    sendFunding: (funding) => sendFunding(ctx, funding),
  };
}

/** The payer, and the accounts of the runs derived so far. */
type WalletsContext = {
  readonly options: RunWalletsOptions;
  readonly payer: PrivateKeyAccount;
  readonly accounts: Map<string, PrivateKeyAccount>;
};

function accountOf(ctx: WalletsContext, runId: string): PrivateKeyAccount {
  let account = ctx.accounts.get(runId);
  if (account === undefined) {
    account = runAccount(ctx.options.payerKey, runId);
    ctx.accounts.set(runId, account);
  }
  return account;
}

/** The payer's wallet client and a reader, on Base at the configured RPC URL. */
function fundingClients(ctx: WalletsContext) {
  const { rpcUrl } = ctx.options;
  if (rpcUrl === null) throw new Error('funding a run wallet needs RPC_URLS (a Base JSON-RPC URL)');
  const chain = defineChain({
    id: 8453,
    name: 'Base',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { retryCount: 1, timeout: 15_000 });
  return {
    wallet: createWalletClient({ account: ctx.payer, chain, transport }),
    reader: createPublicClient({ chain, transport, pollingInterval: 250, cacheTime: 0 }),
  };
}

/** Sends a signed funding unless it is mined already, waits for it, and checks that it moved the run's USDC. */
async function sendFunding(ctx: WalletsContext, funding: SignedFunding): Promise<FundingOutcome> {
  const { wallet, reader } = fundingClients(ctx);
  const receipt = () => reader.getTransactionReceipt({ hash: funding.tx }).catch(() => null);
  const nonce = parseTransaction(funding.raw).nonce ?? 0;
  // The payer's next nonce: past this funding's, with no receipt of it, means another transaction took it.
  const taken = async () =>
    (await reader.getTransactionCount({ address: ctx.payer.address, blockTag: 'latest' })) > nonce;
  let mined = await receipt();
  if (mined === null) {
    const failed = await wallet.sendRawTransaction({ serializedTransaction: funding.raw }).then(
      () => null,
      (error: unknown) => error ?? new Error('not sent'),
    );
    if (failed !== null) {
      // Mined since, or still pending from an earlier send: both are this funding. Otherwise it is not.
      mined = await receipt();
      if (mined === null && (await taken())) return { kind: 'dropped' };
      const pending = await reader.getTransaction({ hash: funding.tx }).catch(() => null);
      if (mined === null && pending === null) throw failed;
    }
    mined ??= await reader
      .waitForTransactionReceipt({ hash: funding.tx, timeout: 120_000 })
      .catch(async (error: unknown) => {
        const again = await receipt();
        if (again !== null || (await taken())) return again;
        throw error;
      });
    if (mined === null) return { kind: 'dropped' };
  }
  if (mined.status !== 'success') throw new Error(`the funding transaction ${funding.tx} reverted`);
  if (!movedRunUsdc(mined.logs, ctx.payer.address, funding))
    throw new Error(`the funding transaction ${funding.tx} did not move the run's USDC`);
  return { kind: 'landed' };
}

/** Whether the logs hold the funding's USDC transfer: from the payer to the run's wallet, of its amount. */
function movedRunUsdc(
  logs: readonly { address: string; data: Hex; topics: [Hex, ...Hex[]] | [] }[],
  payer: `0x${string}`,
  funding: SignedFunding,
): boolean {
  return logs.some((log) => {
    if (!sameAddress(log.address, BASE_USDC)) return false;
    try {
      const event = decodeEventLog({ abi: erc20Abi, data: log.data, topics: log.topics });
      return (
        event.eventName === 'Transfer' &&
        sameAddress(event.args.from, payer) &&
        sameAddress(event.args.to, funding.to) &&
        event.args.value === BigInt(funding.amount_atomic)
      );
    } catch {
      return false;
    }
  });
}
