/**
 * A local Base: anvil (chain id 8453) with Circle's FiatToken at the Base USDC address, funded buyers, and
 * Multicall3. Keys come from anvil's default mnemonic: admin 0, relayer (facilitator signer) 1, service wallet 2,
 * buyers from 3 on. Buyers hold USDC but no ETH: EIP-3009 lets the relayer pay the gas.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { pbkdf2Sync } from 'node:crypto';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
  type TestClient,
  toHex,
} from 'viem';
import { HDKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import {
  BASE_USDC_ADDRESS,
  fiatTokenAbi,
  installFiatToken,
  installMulticall3,
  mintUsdc,
  SandboxChainError,
} from './fiat-token.ts';
import { freePort } from './ports.ts';

/** A running local chain and the handles tests need. */
export type Chain = {
  rpcUrl: string;
  chainId: 8453;
  usdc: `0x${string}`;
  publicClient: PublicClient;
  testClient: TestClient;
  accounts: {
    admin: PrivateKeyAccount;
    relayer: PrivateKeyAccount;
    service: PrivateKeyAccount;
    buyers: PrivateKeyAccount[];
  };
  /** Private keys of `accounts.buyers`, same order (the world state file publishes them). */
  buyerKeys: `0x${string}`[];
  /** False when Multicall3 could not be placed; facilitator failure reasons are then less precise. */
  multicall3: boolean;
  /** Process id of the anvil child (tests use it to prove nothing is left running). */
  pid: number | undefined;
  balanceOf(address: `0x${string}`): Promise<bigint>;
  mint(to: `0x${string}`, atomic: bigint): Promise<void>;
  mine(blocks?: number): Promise<void>;
  /** Moves chain time forward (evm_increaseTime) and mines one block so the new time is observable. */
  increaseTime(seconds: number): Promise<void>;
  stop(): Promise<void>;
};

/** Options of {@link startChain}; `blockTime` switches from automine to interval mining after setup. */
export type ChainOptions = { port?: number; buyers?: number; fundEach?: bigint; blockTime?: number };

/** anvil's default mnemonic; its first ten accounts start with 10,000 ETH each. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

/** The viem chain of the local Base (id 8453, so x402's `eip155:8453` defaults apply unchanged). */
export const localBase = (rpcUrl: string) =>
  defineChain({
    id: 8453,
    name: 'Base (local anvil)',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });

/** Starts anvil, installs USDC and Multicall3, and funds the buyers (default 3 × 100 USDC). */
export async function startChain(options: ChainOptions = {}): Promise<Chain> {
  const port = options.port ?? (await freePort());
  const rpcUrl = `http://127.0.0.1:${port}`;
  const anvil = await spawnAnvil(port);
  try {
    const chain = localBase(rpcUrl);
    const transport = http(rpcUrl, { retryCount: 0 });
    const publicClient = createPublicClient({ chain, transport, pollingInterval: 25, cacheTime: 0 });
    const testClient = createTestClient({ chain, transport, mode: 'anvil', pollingInterval: 25 });
    await waitForRpc(publicClient, anvil);

    const keys = deriveKeys(3 + (options.buyers ?? 3));
    const [admin, relayer, service, ...buyers] = keys.map((key) => privateKeyToAccount(key));
    if (admin === undefined || relayer === undefined || service === undefined) {
      throw new SandboxChainError('key derivation gave too few accounts');
    }
    const adminWallet = createWalletClient({ account: admin, chain, transport, pollingInterval: 25 });
    const clients = { publicClient, testClient, admin: adminWallet };

    await installFiatToken(clients);
    const multicall3 = await installMulticall3(clients);
    const fundEach = options.fundEach ?? 100_000_000n;
    for (const buyer of buyers) {
      if (fundEach > 0n) await mintUsdc(clients, buyer.address, fundEach);
      // anvil pre-funds its first ten accounts; buyers are emptied so every test proves EIP-3009 is gasless.
      await testClient.setBalance({ address: buyer.address, value: 0n });
    }
    if (options.blockTime !== undefined) await testClient.setIntervalMining({ interval: options.blockTime });

    return {
      rpcUrl,
      chainId: 8453,
      usdc: BASE_USDC_ADDRESS,
      publicClient,
      testClient,
      accounts: { admin, relayer, service, buyers },
      buyerKeys: keys.slice(3),
      multicall3,
      pid: anvil.process.pid,
      balanceOf: (address) =>
        publicClient.readContract({
          address: BASE_USDC_ADDRESS,
          abi: fiatTokenAbi,
          functionName: 'balanceOf',
          args: [address],
        }),
      mint: (to, atomic) => mintUsdc(clients, to, atomic),
      mine: (blocks = 1) => testClient.mine({ blocks }),
      increaseTime: async (seconds) => {
        await testClient.increaseTime({ seconds });
        await testClient.mine({ blocks: 1 });
      },
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

/**
 * Private keys of the first `count` accounts of {@link ANVIL_MNEMONIC} (BIP-44 `m/44'/60'/0'/0/i`), the
 * same keys as viem's `mnemonicToAccount(mnemonic, { addressIndex: i })`. The BIP-39 seed is computed once with
 * Node's native PBKDF2: viem recomputes it in JavaScript per account, about 40 ms each.
 */
export function deriveKeys(count: number, mnemonic = ANVIL_MNEMONIC): Hex[] {
  const seed = pbkdf2Sync(mnemonic.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
  const root = HDKey.fromMasterSeed(seed);
  return Array.from({ length: count }, (_, index) => {
    const key = root.derive(`m/44'/60'/0'/0/${index}`).privateKey;
    if (key === null) throw new SandboxChainError(`no private key at index ${index}`);
    return toHex(key);
  });
}

type Anvil = { process: ChildProcess; exited: Promise<void>; output(): string; stop(): Promise<void> };

const require = createRequire(import.meta.url);
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function anvilBinary(): string {
  // The launcher package resolves the platform package at run time; we do the same, without its postinstall.
  try {
    const platformPackage = require.resolve(
      `@foundry-rs/anvil-${process.platform}-${anvilArch()}/package.json`,
    );
    return join(dirname(platformPackage), 'bin', 'anvil');
  } catch (cause) {
    throw new SandboxChainError('anvil binary not installed (@foundry-rs/anvil platform package)', { cause });
  }
}

function anvilArch(): string {
  return process.arch === 'x64' ? 'amd64' : process.arch;
}

async function spawnAnvil(port: number): Promise<Anvil> {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', '8453', '--silent'];
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  running.add(child);
  void exited.then(() => running.delete(child));
  installExitHook();
  // If this process dies without running its exit hook (SIGKILL, a killed test worker), the watchdog's stdin
  // reaches EOF and it ends anvil, so no orphan keeps the port.
  const watchdog =
    child.pid === undefined
      ? undefined
      : spawn('sh', ['-c', 'read _ignored; kill "$0" 2>/dev/null', String(child.pid)], {
          stdio: ['pipe', 'ignore', 'ignore'],
        });
  watchdog?.unref();
  watchdog?.stdin?.on('error', () => {});
  if (watchdog?.stdin instanceof Socket) watchdog.stdin.unref();

  const stop = async () => {
    if (watchdog !== undefined && watchdog.exitCode === null) watchdog.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    }
  };
  return { process: child, exited, output: () => stderr, stop };
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

async function waitForRpc(publicClient: PublicClient, anvil: Anvil): Promise<void> {
  const deadline = Date.now() + 10_000;
  let exited = false;
  void anvil.exited.then(() => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new SandboxChainError(`anvil exited during start-up: ${anvil.output().trim()}`);
    try {
      if ((await publicClient.getChainId()) === 8453) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new SandboxChainError('anvil did not answer within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
