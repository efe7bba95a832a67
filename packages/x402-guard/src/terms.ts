/**
 * The payment terms of one requirement and their hash, exactly as Spotcheck computes `payment_terms_sha256`
 * (Spotcheck's docs/api.md §2.1): lower-case hex SHA-256 of the UTF-8 text `network|asset|amount|pay_to`, lower-cased
 * as a whole. A v1 requirement names its network by a v1 name (`base`) and its amount `maxAmountRequired`; the hash
 * is taken over the CAIP-2 id the name stands for, as Spotcheck decodes it.
 */
import { createHash } from 'node:crypto';

/** A requirement as the x402 client selected it: v2 (`amount`) or v1 (`maxAmountRequired`, a v1 network name). */
export type RequirementLike = {
  readonly scheme?: string;
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  readonly amount?: string;
  readonly maxAmountRequired?: string;
  readonly resource?: string;
};

/** The four terms the hash covers. */
export type Terms = { network: string; asset: string; amountAtomic: string; payTo: string };

/**
 * The x402 SDK's v1 network names and their EVM chain ids (`EVM_NETWORK_CHAIN_ID_MAP` of `@x402/evm/v1`), copied so
 * the guard needs only `@x402/core`; `test/terms.test.ts` holds the copy equal to the installed SDK's.
 */
export const V1_CHAIN_IDS: Readonly<Record<string, number>> = {
  ethereum: 1,
  sepolia: 11155111,
  abstract: 2741,
  'abstract-testnet': 11124,
  'base-sepolia': 84532,
  base: 8453,
  'avalanche-fuji': 43113,
  avalanche: 43114,
  iotex: 4689,
  sei: 1329,
  'sei-testnet': 1328,
  polygon: 137,
  'polygon-amoy': 80002,
  peaq: 3338,
  story: 1514,
  educhain: 41923,
  'skale-base-sepolia': 324705682,
  megaeth: 4326,
  monad: 143,
  stable: 988,
  'stable-testnet': 2201,
  celo: 42220,
  flare: 14,
};

const V1_SOLANA: Readonly<Record<string, string>> = {
  solana: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'solana-devnet': 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
};

/**
 * The CAIP-2 id of a network as a requirement names it: a CAIP-2 id is kept (namespace lower-cased), a v1 name is
 * mapped; an unknown v1 name is kept as written (its hash then matches nothing Spotcheck approves: fail closed).
 * @example caip2Network('base') // 'eip155:8453'
 */
export function caip2Network(network: string): string {
  if (network.includes(':')) {
    const [namespace = '', ...rest] = network.split(':');
    return `${namespace.toLowerCase()}:${rest.join(':')}`;
  }
  const name = network.toLowerCase();
  const id = Object.hasOwn(V1_CHAIN_IDS, name) ? V1_CHAIN_IDS[name] : undefined;
  if (id !== undefined) return `eip155:${id}`;
  return Object.hasOwn(V1_SOLANA, name) ? (V1_SOLANA[name] ?? network) : network;
}

/** The terms of a requirement: `amount` (v2) or `maxAmountRequired` (v1); null when it states neither. */
export function requirementTerms(requirement: RequirementLike): Terms | null {
  const amountAtomic = requirement.amount ?? requirement.maxAmountRequired;
  if (typeof amountAtomic !== 'string') return null;
  return {
    network: caip2Network(requirement.network),
    asset: requirement.asset,
    amountAtomic,
    payTo: requirement.payTo,
  };
}

/**
 * Spotcheck's `payment_terms_sha256` of a set of terms.
 * @example termsSha256({ network: 'eip155:8453', asset: '0x8335…', amountAtomic: '10000', payTo: '0x11…' })
 */
export function termsSha256(terms: Terms): string {
  const text = `${terms.network}|${terms.asset}|${terms.amountAtomic}|${terms.payTo}`.toLowerCase();
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The hash of a requirement's terms; null when the requirement states no amount. */
export function requirementSha256(requirement: RequirementLike): string | null {
  const terms = requirementTerms(requirement);
  return terms === null ? null : termsSha256(terms);
}
