/**
 * The chain reader of payment status: asks every configured RPC source, in parallel and independently, what
 * it knows about one EIP-3009 authorization on USDC (docs/x402.md §8). Each source is a separate viem client
 * with its own timeout and no retries; a failing source is reported, never thrown. The rules that turn this
 * evidence into a status are pure and live in `core/payment-status.ts`.
 *
 * Reads use the `latest` tag, after the head block was read: a state read at a block later than the reported
 * head can only make the answer more conservative (an authorization cannot be used after validBefore, so an
 * unused nonce seen later is still unused at the head; confirmations are counted from the lower head).
 */
import {
  createPublicClient,
  decodeEventLog,
  decodeFunctionData,
  http,
  type PublicClient,
  pad,
  parseAbi,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  toEventSelector,
  toHex,
} from 'viem';
import type { Hex } from '../core/payment-input.ts';
import type {
  ChainEvidence,
  ChainQuery,
  LogRef,
  ReceiptEvidence,
  RecoveredAuthorization,
  SourceEvidence,
} from '../core/payment-status.ts';

export type ChainReaderOptions = {
  sources: { name: string; url: string }[];
  usdc: Hex;
  /** Budget of one source for one query, and the timeout of each of its requests (ms). Default 2500. */
  timeoutMs?: number;
  /** Upper bound of the `eth_getLogs` block range (RPC providers cap it). Default 10,000 blocks. */
  maxLogBlocks?: number;
};

export type ChainReader = {
  read(query: ChainQuery): Promise<ChainEvidence>;
  /** Totals since creation, for the bench: queries read and JSON-RPC calls made over all sources. */
  stats(): { queries: number; rpcCalls: number };
};

/** EIP-3009 surface of FiatToken v2.x (docs/x402.md §8.1), both signature encodings of each function. */
export const eip3009Abi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
]);
const USED = toEventSelector('AuthorizationUsed(address,bytes32)');
const CANCELED = toEventSelector('AuthorizationCanceled(address,bytes32)');

/** Base makes a block every 2 s (docs/x402.md §8.3). */
const BLOCK_TIME_S = 2;
/** Slack added to the time-derived log window, for block-time drift (about 30 minutes on Base). */
const MARGIN_BLOCKS = 900;
/** When validAfter says nothing (the v2 SDK signs 0), assume the authorization was signed at most this long
 *  before validBefore; x402 uses maxTimeoutSeconds, default 300. A use outside the window reads as "used, event
 *  not found": `unknown`, never a wrong `safe_to_resign`. */
const ASSUMED_MAX_VALIDITY_S = 3600n;

/**
 * Creates the chain reader over two or more independent RPC sources.
 *
 * @example createChainReader({ sources: [{ name: 'a', url }, { name: 'b', url: url2 }], usdc: BASE_USDC }).read(query)
 */
export function createChainReader(options: ChainReaderOptions): ChainReader {
  const timeoutMs = options.timeoutMs ?? 2500;
  const maxLogBlocks = options.maxLogBlocks ?? 10_000;
  const clients = options.sources.map((source) => ({
    name: source.name,
    client: createPublicClient({ transport: http(source.url, { timeout: timeoutMs, retryCount: 0 }) }),
  }));
  const totals = { queries: 0, rpcCalls: 0 };

  return {
    async read(query) {
      totals.queries += 1;
      const sources = await Promise.all(
        clients.map(async ({ name, client }) => {
          const counter = { calls: 0 };
          const reading = readSource(client, counter, { usdc: options.usdc, maxLogBlocks }, query);
          const evidence = await withDeadline(reading, timeoutMs).then(
            (result) => ({ ...result, name, rpcCalls: counter.calls }),
            (error: unknown) => failed(name, error, counter.calls),
          );
          totals.rpcCalls += counter.calls;
          return evidence;
        }),
      );
      return { sources };
    },
    stats: () => ({ ...totals }),
  };
}

type Settings = { usdc: Hex; maxLogBlocks: number };
type Counter = { calls: number };

/** One source being read: its client, its counted calls, and the settings. */
type Source = Settings & { client: PublicClient; call: <T>(request: () => Promise<T>) => Promise<T> };

/** What one source's reading has learnt of the authorization so far. */
type Trail = {
  from: Hex | null;
  nonce: Hex | null;
  recovered: RecoveredAuthorization | null;
  receipt: TransactionReceipt | null;
  usedLog: LogRef | null;
  canceledLog: LogRef | null;
};

/** What one source knows of the query: the named transaction, the head, the nonce's state and its event. */
async function readSource(
  client: PublicClient,
  counter: Counter,
  settings: Settings,
  query: ChainQuery,
): Promise<Omit<SourceEvidence, 'name' | 'rpcCalls'>> {
  const call = <T>(request: () => Promise<T>): Promise<T> => {
    counter.calls += 1;
    return request();
  };
  const source: Source = { ...settings, client, call };
  const trail: Trail = {
    from: query.from,
    nonce: query.nonce,
    recovered: null,
    receipt: null,
    usedLog: null,
    canceledLog: null,
  };
  // The receipt first, then the head: a receipt found is then never above the head.
  if (query.txHash !== null) await readTransaction(source, query, query.txHash, trail);
  const block = await call(() => client.getBlock({ blockTag: 'latest' }));
  const head = { number: Number(block.number), time: Number(block.timestamp) };
  const { from, nonce } = trail;
  const nonceUsed =
    from !== null && nonce !== null ? await readNonce(source, query, trail, [from, nonce], head) : null;
  return {
    ok: true,
    head: head.number,
    headTime: head.time,
    nonceUsed,
    usedLog: trail.usedLog,
    canceledLog: trail.canceledLog,
    receipt:
      trail.receipt && receiptEvidence(trail.receipt, settings.usdc, from, trail.recovered?.to ?? null),
    recovered: trail.recovered,
    error: null,
  };
}

/**
 * The transaction the query names: its receipt, and the authorization it used or canceled (from its events, else,
 * for a call to USDC that emitted none, from its calldata).
 */
async function readTransaction(source: Source, query: ChainQuery, hash: Hex, trail: Trail): Promise<void> {
  const { client, call, usdc } = source;
  const receipt = await call(() => client.getTransactionReceipt({ hash })).catch(notFoundAsNull);
  trail.receipt = receipt;
  if (receipt === null) return;
  const { from, nonce } = trail;
  const events = authorizationEvents(receipt, usdc);
  const event = events.find((e) => from === null || (same(e.authorizer, from) && same(e.nonce, nonce)));
  if (event !== undefined) {
    trail.from ??= event.authorizer;
    trail.nonce ??= event.nonce;
    if (query.from === null)
      trail.recovered = {
        from: event.authorizer,
        nonce: event.nonce,
        to: null,
        value: null,
        validAfter: null,
        validBefore: null,
      };
    const ref = { txHash: receipt.transactionHash, blockNumber: Number(receipt.blockNumber) };
    if (event.used) trail.usedLog = ref;
    else trail.canceledLog = ref;
  } else if (query.from === null && receipt.to !== null && same(receipt.to, usdc)) {
    // Reverted or unusual transaction: the authorization is still in its calldata.
    const tx = await call(() => client.getTransaction({ hash }));
    trail.recovered = authorizationFromCalldata(tx.input);
    trail.from = trail.recovered?.from ?? null;
    trail.nonce = trail.recovered?.nonce ?? null;
  }
}

/**
 * Whether the nonce is used; when it is and no event is known yet, the event found in the logs of its validity
 * window, and the receipt of the transaction that used it.
 */
async function readNonce(
  source: Source,
  query: ChainQuery,
  trail: Trail,
  [authorizer, id]: [Hex, Hex],
  head: { number: number; time: number },
): Promise<boolean> {
  const { client, call, usdc } = source;
  const nonceUsed = await call(() =>
    client.readContract({
      address: usdc,
      abi: eip3009Abi,
      functionName: 'authorizationState',
      args: [authorizer, id],
    }),
  );
  if (nonceUsed && trail.usedLog === null && trail.canceledLog === null) {
    const validity = {
      validAfter: query.validAfter ?? trail.recovered?.validAfter ?? null,
      validBefore: query.validBefore ?? trail.recovered?.validBefore ?? null,
    };
    const fromBlock = Math.max(0, head.number - windowBlocks(head.time, validity, source.maxLogBlocks));
    const logs = await call(() =>
      client.request({
        method: 'eth_getLogs',
        params: [
          {
            address: usdc,
            topics: [[USED, CANCELED], pad(authorizer), id],
            fromBlock: toHex(fromBlock),
            toBlock: 'latest',
          },
        ],
      }),
    );
    const used = logs.find((log) => log.topics[0] === USED);
    const canceled = logs.find((log) => log.topics[0] === CANCELED);
    trail.usedLog = used ? logRef(used) : null;
    trail.canceledLog = canceled ? logRef(canceled) : null;
  }
  if (trail.usedLog !== null && trail.receipt?.transactionHash !== trail.usedLog.txHash) {
    const hash = trail.usedLog.txHash;
    trail.receipt = await call(() => client.getTransactionReceipt({ hash })).catch(notFoundAsNull);
  }
  return nonceUsed;
}

/** Blocks to search back from the head: the authorization's validity in Base blocks plus a margin, capped. */
function windowBlocks(
  headTime: number,
  query: Pick<ChainQuery, 'validAfter' | 'validBefore'>,
  cap: number,
): number {
  if (query.validBefore === null) return cap;
  const lowest = bigMax(query.validAfter ?? 0n, query.validBefore - ASSUMED_MAX_VALIDITY_S);
  const seconds = BigInt(headTime) - lowest;
  if (seconds <= 0n) return Math.min(cap, MARGIN_BLOCKS);
  const blocks = seconds / BigInt(BLOCK_TIME_S) + BigInt(MARGIN_BLOCKS);
  return blocks > BigInt(cap) ? cap : Number(blocks);
}

type AuthorizationEvent = { authorizer: Hex; nonce: Hex; used: boolean };

function authorizationEvents(receipt: TransactionReceipt, usdc: Hex): AuthorizationEvent[] {
  const events: AuthorizationEvent[] = [];
  for (const log of receipt.logs) {
    if (!same(log.address, usdc)) continue;
    const decoded = safeDecode(log);
    if (decoded?.eventName === 'AuthorizationUsed' || decoded?.eventName === 'AuthorizationCanceled') {
      events.push({ ...decoded.args, used: decoded.eventName === 'AuthorizationUsed' });
    }
  }
  return events;
}

function receiptEvidence(
  receipt: TransactionReceipt,
  usdc: Hex,
  from: Hex | null,
  to: Hex | null,
): ReceiptEvidence {
  const transfers = receipt.logs.flatMap((log) => {
    const decoded = same(log.address, usdc) ? safeDecode(log) : null;
    return decoded?.eventName === 'Transfer' && from !== null && same(decoded.args.from, from)
      ? [decoded.args]
      : [];
  });
  const transfer = transfers.find((t) => to === null || same(t.to, to)) ?? transfers[0] ?? null;
  return {
    txHash: receipt.transactionHash,
    status: receipt.status,
    blockNumber: Number(receipt.blockNumber),
    transfer,
  };
}

function authorizationFromCalldata(input: Hex): RecoveredAuthorization | null {
  try {
    const call = decodeFunctionData({ abi: eip3009Abi, data: input });
    if (call.functionName === 'transferWithAuthorization') {
      const [from, to, value, validAfter, validBefore, nonce] = call.args;
      return { from, nonce, to, value, validAfter, validBefore };
    }
    if (call.functionName === 'cancelAuthorization') {
      const [from, nonce] = call.args;
      return { from, nonce, to: null, value: null, validAfter: null, validBefore: null };
    }
  } catch {
    // Not a direct EIP-3009 call (a relayer contract, a multicall): nothing to recover.
  }
  return null;
}

function safeDecode(log: { data: Hex; topics: [Hex, ...Hex[]] | [] }) {
  try {
    return decodeEventLog({ abi: eip3009Abi, data: log.data, topics: log.topics });
  } catch {
    return null;
  }
}

function logRef(log: { transactionHash: Hex | null; blockNumber: Hex | bigint | null }): LogRef {
  if (log.transactionHash === null || log.blockNumber === null)
    throw new ChainReaderError('pending log returned');
  return { txHash: log.transactionHash, blockNumber: Number(log.blockNumber) };
}

function failed(name: string, error: unknown, rpcCalls: number): SourceEvidence {
  const message =
    error instanceof Error
      ? ((error as { shortMessage?: string }).shortMessage ?? error.message)
      : String(error);
  return {
    name,
    ok: false,
    head: null,
    headTime: null,
    nonceUsed: null,
    usedLog: null,
    canceledLog: null,
    receipt: null,
    recovered: null,
    error: message,
    rpcCalls,
  };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ChainReaderError(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function notFoundAsNull(error: unknown): null {
  if (error instanceof TransactionReceiptNotFoundError) return null;
  throw error;
}

function same(a: string, b: string | null): boolean {
  return b !== null && a.toLowerCase() === b.toLowerCase();
}

function bigMax(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** A broken invariant of an RPC answer, or a source's deadline. */
export class ChainReaderError extends Error {
  override name = 'ChainReaderError';
}
