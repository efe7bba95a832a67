/**
 * Disputed listings (docs/decisions.md "Disputed listings"): which listings of one normalized URL may stand as its
 * expectation. Public lists carry what sellers declare about themselves, so one hostile seller can list a
 * competitor's URL with its own wallet; when the listings of a URL disagree on the wallet, the network or the price
 * (within one source or across sources), none of them is an expectation. First-party evidence, the origin's own
 * `/.well-known/x402` naming its own URL, outranks third-party listings: a third-party listing that contradicts it
 * is set aside, and only the rest must agree. Pure; the crawl plan and every store's listing lookup
 * ({@link pickListing}) call it.
 */
import type { HttpMethod, Listing } from './model.ts';

/** The terms a dispute is about, named as the data files name them. */
export const DISPUTE_FIELDS = ['pay_to', 'network', 'price_usd'] as const;
export type DisputeField = (typeof DISPUTE_FIELDS)[number];

/** A listing and whether it is first-party evidence: set only by the `/.well-known/x402` source, never taken from what a source sends. */
export type Evidence = Listing & { firstParty?: boolean };

/** The rule in words, for the rules document (`core/rules.ts` `listing_disputes`). */
export const LISTING_DISPUTE_RULE: readonly string[] = [
  'The listings of one normalized URL (any method, any source, the same source twice) are its expectation only when they agree:',
  'two listings that name different wallets (pay_to), networks or prices dispute each other; a listing that names none of a term does not;',
  'first-party evidence, an origin’s own /.well-known/x402 naming a URL of that origin, outranks third-party listings: a listing that contradicts it is set aside;',
  'a disputed URL is still probed, with no expectation (expected_source null): its receipt never reads pay_to_mismatch, network_mismatch or price_mismatch against a listing;',
  'its listings are not exported (listings.json), it never enters the saves list, its receipts never count against the seller’s reputation, and a live check of it is held to no listing;',
  'the run records the dispute: disputes.json, the disputed member of its receipts.ndjson line and listing.disputed in its receipt.',
];

/** What the listings of one URL come to: the pool its expectation is chosen from, or the dispute. */
export type Settled<L extends Evidence> =
  | { disputed: false; pool: L[] }
  | { disputed: true; fields: DisputeField[]; listings: L[] };

/**
 * Settles the listings of one normalized URL. Undisputed, the pool is every listing, or, when first-party evidence
 * set some aside, the ones left; disputed, `listings` are those naming a disputed term, in their order.
 * @example settleListings([{ …, payTo: '0xaaa…' }, { …, payTo: '0xbbb…' }]) // { disputed: true, fields: ['pay_to'], … }
 */
export function settleListings<L extends Evidence>(candidates: readonly L[]): Settled<L> {
  // Terms are compared as keys, so a hostile list naming one URL many times costs one pass, not one per pair.
  const firstSaid = DISPUTE_FIELDS.map((field) =>
    keysOf(
      field,
      candidates.filter((l) => l.firstParty === true),
    ),
  );
  // A third-party listing that contradicts the origin's own word on any term is set aside whole.
  const kept = candidates.filter(
    (l) =>
      l.firstParty === true ||
      DISPUTE_FIELDS.every((field, i) => {
        const key = keyOf(field, l);
        const said = firstSaid[i] as Set<string>;
        return key === null || said.size === 0 || said.has(key);
      }),
  );
  const fields = DISPUTE_FIELDS.filter((field) => keysOf(field, kept).size > 1);
  if (fields.length === 0) return { disputed: false, pool: kept };
  const named = kept.filter((l) => fields.some((field) => keyOf(field, l) !== null));
  return { disputed: true, fields, listings: named };
}

/**
 * The listing a check of an endpoint is held to, from every listing of its normalized URL: none when they disagree
 * on wallet, network or price ({@link settleListings}); else the method's own listing if any, sources ranked by
 * name so the choice is stable. Every store's listing lookup calls it.
 * @example pickListing([{ …, method: 'POST', source: 'b' }, { …, method: 'GET', source: 'a' }], 'GET') // the GET one
 */
export function pickListing(candidates: readonly Listing[], method: HttpMethod): Listing | null {
  const settled = settleListings(candidates);
  if (settled.disputed) return null;
  const same = settled.pool.filter((listing) => listing.method === method);
  const pool = same.length > 0 ? same : settled.pool;
  return [...pool].sort((a, b) => a.source.localeCompare(b.source))[0] ?? null;
}

function keysOf(field: DisputeField, listings: readonly Listing[]): Set<string> {
  const keys = new Set<string>();
  for (const listing of listings) {
    const key = keyOf(field, listing);
    if (key !== null) keys.add(key);
  }
  return keys;
}

/**
 * What a listing says of a term, as a key two listings agree on exactly when they say the same: EVM addresses in
 * any case (`sameAddress`), prices to the millionth of a dollar (USDC's unit); null when it says nothing.
 */
function keyOf(field: DisputeField, listing: Listing): string | null {
  if (field === 'network') return listing.network;
  if (field === 'pay_to') {
    const payTo = listing.payTo;
    return payTo !== null && /^0x[0-9a-fA-F]{40}$/.test(payTo) ? payTo.toLowerCase() : payTo;
  }
  const price = listing.priceUsd;
  return typeof price === 'number' && Number.isFinite(price) ? String(Math.round(price * 1e6)) : null;
}
