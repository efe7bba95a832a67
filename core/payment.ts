/**
 * The payment object of a `pay` answer (docs/api.md §2.2) and the payment-terms hash (docs/api.md §2.1).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { atomicToUsd, isAtomic } from './amount.ts';
import { type ExpirySource, isValidDate, optionExpiry } from './expiry.ts';
import type { Accept } from './model.ts';
import { canonicalUsdc, isCanonicalUsdc } from './networks.ts';

/** docs/api.md §2.2: the one payment a router may sign. The last four fields are kept for older clients. */
export type PaymentObject = {
  network: string;
  asset: string;
  amount: { atomic: string; usd: number | null };
  pay_to: string;
  /** ISO 8601 UTC. */
  deadline: string;
  deadline_source: ExpirySource;
  scheme: string;
  asset_is_usdc: boolean | null;
  amount_atomic: string;
  amount_usd: number | null;
};

/**
 * Builds the payment object for an approved option. Network, asset and pay_to are copied as the seller
 * sent them, because a signed payment must match the seller's own terms. `amount.usd` is null when the
 * network's USDC decimals are unknown; `asset_is_usdc` is null when the network has no canonical USDC.
 * An expiry that is not a valid date becomes the probe time, so the deadline reads as already passed
 * (fail closed) rather than as a far future.
 * @example buildPayment(option, new Date('2026-01-01T00:00:00Z')).deadline_source // 'maxTimeoutSeconds'
 */
export function buildPayment(option: Accept, probedAt: Date): PaymentObject {
  const usdc = canonicalUsdc(option.network);
  const usd = optionPriceUsd(option);
  const expiry = optionExpiry(option, probedAt);
  const deadline = isValidDate(expiry.at) ? expiry.at : isValidDate(probedAt) ? probedAt : new Date(0);
  return {
    network: option.network,
    asset: option.asset,
    amount: { atomic: option.amount, usd },
    pay_to: option.payTo,
    deadline: deadline.toISOString(),
    deadline_source: expiry.source,
    scheme: option.scheme,
    asset_is_usdc: usdc === null ? null : isCanonicalUsdc(option.network, option.asset),
    amount_atomic: option.amount,
    amount_usd: usd,
  };
}

/**
 * The USD price of an option (docs/api.md §2.1 `quoted_price_usd`, `history_observations[].price_usd`): its atomic
 * amount in the decimals of its network's canonical USDC, and null for any other asset (units are never
 * guessed: 1 DAI is 10^18 atomic units, which USDC decimals would read as 10^12 USD), an unknown network or an
 * amount that is not atomic.
 * @example optionPriceUsd({ network: 'eip155:8453', asset: BASE_USDC, amount: '10000' }) // 0.01
 */
export function optionPriceUsd(option: Pick<Accept, 'network' | 'asset' | 'amount'>): number | null {
  const usdc = canonicalUsdc(option.network);
  if (usdc === null || !isCanonicalUsdc(option.network, option.asset) || !isAtomic(option.amount))
    return null;
  return atomicToUsd(option.amount, usdc.decimals);
}

/** The four payment terms the hash covers. */
export type HashedTerms = { network: string; asset: string; amountAtomic: string; payTo: string };

/**
 * docs/api.md §2.1 `payment_terms_sha256`: lower-case hex SHA-256 of the UTF-8 bytes of
 * `network|asset|amount_atomic|pay_to`, lower-cased as a whole (so checksum casing of addresses never
 * changes the hash).
 * @example paymentTermsSha256({ network: 'eip155:8453', asset: '0x8335…', amountAtomic: '10000', payTo: '0x11…' })
 */
export function paymentTermsSha256(terms: HashedTerms): string {
  const text = `${terms.network}|${terms.asset}|${terms.amountAtomic}|${terms.payTo}`.toLowerCase();
  return bytesToHex(sha256(utf8ToBytes(text)));
}
