/**
 * Wallets, tokens and networks the seller fleet uses. USDC addresses come from `@x402/evm`'s own asset table
 * (the asset the SDK resolves `"$0.01"` to), so the hand-written sellers quote exactly what SDK sellers quote.
 */
import { DEFAULT_ASSETS } from '@x402/evm';
import { BASE } from '../../core/networks.ts';

export type Address = `0x${string}`;

/** The honest sellers' wallet (EIP-55 checksummed). */
export const FLEET_WALLET: Address = '0xf1Ee7000000000000000000000000000000f1eE7';
/** Where the hostile first option of `hostile-first` tries to send the money. */
export const ATTACKER_WALLET: Address = '0xbad0bAd00000000000000000000000000bAd0bAD';
/** `wallet-rotates` alternates between these two on every request. */
export const ROTATING_WALLETS: readonly [Address, Address] = [
  '0xa100000000000000000000000000000000000001',
  '0xa100000000000000000000000000000000000002',
];
/** The wallet `pay-to-listing` asks for: honest, but not the fleet's, so an expected `pay_to` of the fleet fails. */
export const LISTING_WALLET: Address = '0x1157000000000000000000000000000000001157';

/** Base mainnet, the network of the service's own checks; the one CAIP-2 constant of `core/networks.ts`. */
export { BASE } from '../../core/networks.ts';
export const BASE_SEPOLIA = 'eip155:84532' as const;
export const POLYGON = 'eip155:137' as const;

/** The canonical USDC of a network as `@x402/evm` ships it (docs/x402.md §3.2). */
export function usdcTokenOf(network: string): { asset: Address; name: string; version: string } {
  const first = DEFAULT_ASSETS[network]?.[0];
  if (first?.symbol !== 'USDC') throw new Error(`sandbox: no USDC in @x402/evm for ${network}`);
  return { asset: first.asset as Address, name: first.name, version: first.version };
}

/** The tokens the sellers quote (address and EIP-712 domain), where `core/networks.ts` `BASE_USDC` is the address alone. */
export const BASE_USDC_TOKEN = usdcTokenOf(BASE);
export const BASE_SEPOLIA_USDC_TOKEN = usdcTokenOf(BASE_SEPOLIA);
export const POLYGON_USDC_TOKEN = usdcTokenOf(POLYGON);

/** DAI on Base: a real stablecoin on the right network that is not USDC (`not-usdc`). */
export const BASE_DAI = {
  asset: '0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb' as Address,
  name: 'Dai Stablecoin',
  version: '1',
};
/** A look-alike of Base USDC (last nibble changed) that borrows USDC's EIP-712 name (`hostile-first`). */
export const LOOKALIKE_USDC = {
  asset: '0x833589fcD6EdB6e08f4C7C32d4F71b54BdA02914' as Address,
  name: 'USD Coin',
  version: '2',
};

/** $0.01 in USDC atomic units (6 decimals). */
export const ONE_CENT = '10000';
