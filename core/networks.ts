/**
 * Networks and each network's canonical USDC.
 *
 * The EVM table is `DEFAULT_ASSETS` of `@x402/evm` (the asset the official SDK resolves `"$0.01"` to), kept
 * only where that asset is USDC on a chain viem does not mark as a testnet. It is read from `_sdk-networks.ts`,
 * which `npm run sdk-networks` writes from the SDK and viem and a test holds to them, so that checking an endpoint
 * does not load the SDK and viem's list of chains. Nothing is retyped here except Solana mainnet USDC, which
 * `@x402/evm` cannot know.
 */
import { SDK_MAINNET_USDC, SDK_V1_CHAIN_IDS, type Usdc } from './_sdk-networks.ts';

export const BASE = 'eip155:8453';
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
/** Solana mainnet (CAIP-2) and its USDC mint; docs/x402.md §2.3 and §3.2. */
export const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const SOLANA_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/** The shape of a canonical USDC; it sits with the generated table its rows come from. */
export type { Usdc } from './_sdk-networks.ts';

const usdcByNetwork = new Map<string, Usdc>(SDK_MAINNET_USDC.map((usdc) => [usdc.network, usdc]));
usdcByNetwork.set(SOLANA, {
  network: SOLANA,
  asset: SOLANA_USDC,
  name: 'USD Coin',
  version: '',
  decimals: 6,
});

/** v1 network names (`base`, `base-sepolia`, `solana`…) to CAIP-2. Unknown names give null. */
export function networkFromV1Name(name: string): string | null {
  const id = Object.hasOwn(SDK_V1_CHAIN_IDS, name) ? SDK_V1_CHAIN_IDS[name] : undefined;
  if (id !== undefined) return `eip155:${id}`;
  if (name === 'solana') return SOLANA;
  if (name === 'solana-devnet') return 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
  return null;
}

/**
 * True for a network a caller may name: a CAIP-2 id (`eip155:8453`, `solana:5eyk…`) or a v1 name that maps to one
 * (`base`). The one rule for the check's `network` and payment-status `terms.network`.
 *
 * @example isNetworkId('eip155:8453') // true; isNetworkId('Base mainnet') // false
 */
export function isNetworkId(text: string): boolean {
  return /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(text) || networkFromV1Name(text) !== null;
}

/** Normalizes a network as sellers write it: CAIP-2 passes through (lower-cased namespace), v1 names map. */
export function normalizeNetwork(network: string): string {
  if (network.includes(':')) {
    const [namespace, ...rest] = network.split(':');
    return `${namespace!.toLowerCase()}:${rest.join(':')}`;
  }
  return networkFromV1Name(network.toLowerCase()) ?? network;
}

/** The canonical USDC of a supported mainnet; null for testnets and networks without USDC. */
export function canonicalUsdc(network: string): Usdc | null {
  return usdcByNetwork.get(network) ?? null;
}

/** A supported mainnet is one with a canonical USDC that Spotcheck can name. */
export function isSupportedMainnet(network: string): boolean {
  return canonicalUsdc(network) !== null;
}

export function isCanonicalUsdc(network: string, asset: string): boolean {
  const usdc = canonicalUsdc(network);
  return usdc !== null && sameAddress(usdc.asset, asset);
}

/** Address equality: EVM hex addresses compare case-insensitively (EIP-55 is only a checksum), others exactly. */
export function sameAddress(a: string, b: string): boolean {
  const evm = /^0x[0-9a-fA-F]{40}$/;
  return evm.test(a) && evm.test(b) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

export function evmChainId(network: string): number | null {
  const match = /^eip155:(\d{1,12})$/.exec(network);
  return match ? Number(match[1]) : null;
}

/** Every supported mainnet and its canonical USDC, for the rules document (`/rules.json` `supported_networks`). */
export function supportedNetworks(): Usdc[] {
  return [...usdcByNetwork.values()];
}
