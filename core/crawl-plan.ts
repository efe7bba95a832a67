/**
 * What a crawl will probe (docs/api.md §2.10): the listings of every source, deduplicated by the `dedupe` rule (one
 * endpoint per normalized URL), each endpoint with the listing it is held to (none when its listings disagree,
 * `core/listing-dispute.ts`), the other sources that list it, and the `lists` / `listed_in` counts.
 */
import { type DisputeField, settleListings } from './listing-dispute.ts';
import type { ListingMetadata, ListingNote } from './listing-terms.ts';
import type { HttpMethod, Listing } from './model.ts';
import type { ListingExample, SourceListing } from './source-listing.ts';

/** One listing of a disputed endpoint, as `disputes.json` shows it (docs/data-files.md). */
export type DisputedListing = {
  source: string;
  url: string;
  method: HttpMethod;
  price_usd: number | null;
  network: string | null;
  pay_to: string | null;
  first_party: boolean;
};

/** Why an endpoint has no expectation: the terms its listings disagree on, and (the first few of) those listings. */
export type ListingDispute = { fields: DisputeField[]; count: number; listings: DisputedListing[] };

/** Listings of one dispute kept in the plan and `disputes.json`; `count` says how many there were. */
export const DISPUTE_LISTINGS_SHOWN = 20;

/** One endpoint to probe. */
export type PlannedEndpoint = {
  /** The normalized URL: the endpoint's identity across sources and runs. */
  urlNorm: string;
  /** The URL as the chosen listing wrote it: what is probed. */
  url: string;
  /** URL host with a non-default port: the unit of the per-host limit. */
  host: string;
  method: HttpMethod;
  /** The expectation: price, wallet and network of the chosen listing; all null when the listings disagree. */
  listing: Listing;
  /** Present when the endpoint's listings disagree: it is then held to none of them. */
  dispute?: ListingDispute;
  sourceList: string;
  /** The other sources listing the endpoint, sorted. */
  alsoListedIn: string[];
  /** The first example parameters any of its listings gives. */
  example: ListingExample | null;
  /** What the chosen listing (else the first that says anything) says of the service (`core/listing-terms.ts`). */
  metadata?: ListingMetadata;
  /** Why the chosen listing's terms give no price, when they do not. */
  note?: ListingNote;
};

export type CrawlPlan = {
  endpoints: PlannedEndpoint[];
  /** Per source: endpoints whose `source_list` is that source. */
  lists: Record<string, number>;
  /** Per source: endpoints listed in that source at all. */
  listedIn: Record<string, number>;
};

/**
 * Deduplicates listings into endpoints, in the order their URLs first appear. The chosen listing is the one of the
 * first source by name (a stable choice, the same as the live check's `pickListing`) among those first-party evidence
 * left standing; when the listings disagree (`settleListings`) the endpoint is still probed as that listing writes
 * it, held to no terms, and carries its `dispute`. `limit` keeps the first endpoints only.
 * @example planCrawl([cdpListing, payaiListing], null).endpoints[0].alsoListedIn // ['payai']
 */
export function planCrawl(listings: readonly SourceListing[], limit: number | null): CrawlPlan {
  const groups = new Map<string, SourceListing[]>();
  for (const listing of listings) {
    const group = groups.get(listing.urlNorm);
    if (group === undefined) groups.set(listing.urlNorm, [listing]);
    else group.push(listing);
  }
  const endpoints: PlannedEndpoint[] = [];
  for (const [urlNorm, group] of groups) {
    if (limit !== null && endpoints.length >= limit) break;
    const settled = settleListings(group);
    const pool = settled.disputed ? group : settled.pool;
    const chosen = [...pool].sort((a, b) => compare(a.source, b.source))[0] as SourceListing;
    const sources = [...new Set(group.map((l) => l.source))].sort(compare);
    const {
      example: _example,
      urlNorm: _norm,
      firstParty: _first,
      metadata: _metadata,
      note,
      ...listing
    } = chosen;
    const metadata = chosen.metadata ?? group.find((l) => l.metadata !== undefined)?.metadata;
    endpoints.push({
      urlNorm,
      url: chosen.url,
      host: new URL(urlNorm).host,
      method: chosen.method,
      ...(settled.disputed
        ? {
            listing: { ...listing, priceUsd: null, network: null, asset: null, payTo: null },
            dispute: {
              fields: settled.fields,
              count: settled.listings.length,
              listings: settled.listings.slice(0, DISPUTE_LISTINGS_SHOWN).map(disputedListing),
            },
          }
        : { listing }),
      sourceList: chosen.source,
      alsoListedIn: sources.filter((s) => s !== chosen.source),
      example: chosen.example ?? group.find((l) => l.example !== null)?.example ?? null,
      ...(metadata === undefined ? {} : { metadata }),
      ...(note === undefined ? {} : { note }),
    });
  }
  const lists: Record<string, number> = {};
  const listedIn: Record<string, number> = {};
  for (const endpoint of endpoints) {
    lists[endpoint.sourceList] = (lists[endpoint.sourceList] ?? 0) + 1;
    for (const source of [endpoint.sourceList, ...endpoint.alsoListedIn])
      listedIn[source] = (listedIn[source] ?? 0) + 1;
  }
  return { endpoints, lists, listedIn };
}

function disputedListing(l: SourceListing): DisputedListing {
  return {
    source: l.source,
    url: l.url,
    method: l.method,
    price_usd: l.priceUsd,
    network: l.network,
    pay_to: l.payTo,
    first_party: l.firstParty === true,
  };
}

/** Code-unit order, so the choice never depends on the locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
