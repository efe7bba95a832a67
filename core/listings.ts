/**
 * Listing files: a JSON array of `{"url", "method"?, "price_usd"?, "network"?, "asset"?, "pay_to"?, "source"}`,
 * as `npm run listings:import` takes them and the crawl reads them as a source. Hostile or sloppy input: every
 * record goes through the schema. The import refuses a file with any bad record whole, naming the record; the
 * crawl keeps the good records and reports the bad ones (a source is never fatal to a run).
 */
import * as v from 'valibot';
import { settleListings } from './listing-dispute.ts';
import type { PageItems } from './listing-pages.ts';
import { isEmptyMetadata, LISTING_NOTES, type ListingNote, metadataOf } from './listing-terms.ts';
import type { Listing } from './model.ts';
import { normalizeNetwork } from './networks.ts';
import { identifier, SOURCE_NAME, type SourceListing } from './source-listing.ts';
import { parseTargetUrl } from './url.ts';

const Record = v.strictObject({
  url: v.string(),
  method: v.optional(v.picklist(['GET', 'POST']), 'GET'),
  price_usd: v.optional(v.nullable(v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1_000_000)))),
  // Signed into receipts as `expected_*`: nothing invisible or reordering.
  network: v.optional(v.nullable(identifier(64))),
  asset: v.optional(v.nullable(identifier(128))),
  pay_to: v.optional(v.nullable(identifier(128))),
  source: v.pipe(v.string(), v.regex(SOURCE_NAME, 'a source name of [a-z0-9._-]')),
  // What the crawl exports beside the terms (core/listing-terms.ts): read leniently, never part of an expectation.
  listing_note: v.optional(v.unknown()),
  service_name: v.optional(v.unknown()),
  tags: v.optional(v.unknown()),
  description: v.optional(v.unknown()),
  icon_url: v.optional(v.unknown()),
  last_updated: v.optional(v.unknown()),
});

export const MAX_LISTINGS = 200_000;

export type ListingRow = Listing & { urlNorm: string };

/**
 * Validates a parsed listings file; the error names the first bad record. A file whose records of one URL disagree
 * on wallet, network or price (`core/listing-dispute.ts`) is refused too, naming two of them: stored, one would
 * silently replace the other as the expectation.
 */
export function parseListings(
  value: unknown,
): { ok: true; rows: ListingRow[] } | { ok: false; message: string } {
  if (!Array.isArray(value)) return { ok: false, message: 'a listings file is a JSON array of records' };
  if (value.length > MAX_LISTINGS) return { ok: false, message: `at most ${MAX_LISTINGS} records per file` };
  const rows: ListingRow[] = [];
  for (const [index, item] of value.entries()) {
    const row = parseRecord(item, index);
    if (!row.ok) return row;
    rows.push(row.row);
  }
  const dispute = firstDispute(rows);
  return dispute === null ? { ok: true, rows } : { ok: false, message: dispute };
}

/** Words for the first URL whose records disagree, or null when every URL's records agree. */
function firstDispute(rows: readonly ListingRow[]): string | null {
  const byUrl = new Map<string, number[]>();
  for (const [index, row] of rows.entries()) {
    const indexes = byUrl.get(row.urlNorm);
    if (indexes === undefined) byUrl.set(row.urlNorm, [index]);
    else indexes.push(index);
  }
  for (const indexes of byUrl.values()) {
    if (indexes.length < 2) continue;
    const group = indexes.map((index) => rows[index] as ListingRow);
    const settled = settleListings(group);
    if (!settled.disputed) continue;
    const [a, b] = settled.listings.map((listing) => indexes[group.indexOf(listing)]);
    return (
      `records ${a} and ${b} (url): they list ${group[0]?.url} with another ${settled.fields.join(', ')}; ` +
      'the listings of one URL must agree (docs/decisions.md "Disputed listings")'
    );
  }
  return null;
}

/**
 * Reads a listings file as a crawl source: good records become listings (each counts for its own `source`),
 * bad ones are counted. Call only with an array (check with `Array.isArray` first); at most
 * {@link MAX_LISTINGS} records are read.
 */
export function readListingRecords(records: unknown[]): PageItems {
  const listings: SourceListing[] = [];
  let refused = Math.max(0, records.length - MAX_LISTINGS);
  let firstRefusal: string | null =
    refused > 0 ? `record ${MAX_LISTINGS}: past ${MAX_LISTINGS} records` : null;
  for (const [index, item] of records.slice(0, MAX_LISTINGS).entries()) {
    const row = parseRecord(item, index);
    if (row.ok) listings.push({ ...row.row, example: null, ...extrasOf(item as Record<string, unknown>) });
    else {
      refused++;
      firstRefusal ??= row.message;
    }
  }
  return { listings, refused, firstRefusal };
}

function parseRecord(
  item: unknown,
  index: number,
): { ok: true; row: ListingRow } | { ok: false; message: string } {
  const parsed = v.safeParse(Record, item);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((part) => String(part.key)).join('.') ?? '';
    return { ok: false, message: `record ${index}${path ? ` (${path})` : ''}: ${issue.message}` };
  }
  const record = parsed.output;
  const target = parseTargetUrl(record.url);
  if (!target.ok) return { ok: false, message: `record ${index} (url): ${target.message}` };
  return {
    ok: true,
    row: {
      url: target.url.href,
      urlNorm: target.normalized,
      method: record.method,
      priceUsd: record.price_usd ?? null,
      network: record.network ? normalizeNetwork(record.network) : null,
      asset: record.asset ?? null,
      payTo: record.pay_to ?? null,
      source: record.source,
    },
  };
}

/** The metadata and note a record of a crawl's `listings.json` carries, read as a catalog item's. */
function extrasOf(record: Record<string, unknown>): Pick<SourceListing, 'metadata' | 'note'> {
  const metadata = metadataOf({
    serviceName: record['service_name'],
    tags: record['tags'],
    description: record['description'],
    iconUrl: record['icon_url'],
    lastUpdated: record['last_updated'],
  });
  const note = record['listing_note'];
  return {
    ...(isEmptyMetadata(metadata) ? {} : { metadata }),
    ...((LISTING_NOTES as readonly unknown[]).includes(note) ? { note: note as ListingNote } : {}),
  };
}
