/**
 * The pages listing sources answer, read leniently item by item (docs/x402.md §6.2, §6.3): a bad item is refused
 * and counted, never fatal; a page that is not the expected shape at all is a failure the adapter reports.
 *
 * - x402 discovery list (`GET <base>/discovery/resources`, CDP and PayAI): `{ items: [...], pagination }` with v2
 *   items, v1-shaped accepts under v2, numeric or ISO `lastUpdated`, `metadata`.
 * - x402scan-style list: `{ data: [...], pagination: { page, page_size, has_next_page } }`, prices in USD.
 * - An origin's `/.well-known/x402`: `{ version: 1, resources: ["https://…"] }`, or the draft
 *   `{ x402Version: 2, items: [{ resource: { url }, accepts }] }`.
 */
import * as v from 'valibot';
import { isEmptyMetadata, listingNoteOf, metadataOf } from './listing-terms.ts';
import {
  chooseOption,
  exampleOf,
  listedOptions,
  methodOf,
  parseSourceListing,
  type SourceListing,
} from './source-listing.ts';

/** Items of one page, and what was refused. */
export type PageItems = { listings: SourceListing[]; refused: number; firstRefusal: string | null };

export type DiscoveryPage = PageItems & {
  /** How many items the page held, accepted or not: paging advances by it. */
  count: number;
  total: number | null;
};
export type X402scanPage = PageItems & { count: number; hasNext: boolean };

type Failure = { ok: false; message: string };

/** Most items one page may hold; a bigger page is refused rather than walked. */
export const MAX_PAGE_ITEMS = 5000;

const count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const DiscoveryShape = v.looseObject({
  items: v.pipe(v.array(v.unknown()), v.maxLength(MAX_PAGE_ITEMS)),
  pagination: v.optional(v.looseObject({ total: v.optional(v.unknown()) })),
});
const X402scanShape = v.looseObject({
  data: v.pipe(v.array(v.unknown()), v.maxLength(MAX_PAGE_ITEMS)),
  pagination: v.looseObject({ has_next_page: v.boolean() }),
});
const WellKnownShape = v.union([
  v.looseObject({ resources: v.pipe(v.array(v.unknown()), v.maxLength(MAX_PAGE_ITEMS)) }),
  v.looseObject({ items: v.pipe(v.array(v.unknown()), v.maxLength(MAX_PAGE_ITEMS)) }),
]);

/** Reads one page of an x402 discovery list. */
export function parseDiscoveryPage(value: unknown, source: string): ({ ok: true } & DiscoveryPage) | Failure {
  const page = v.safeParse(DiscoveryShape, value);
  if (!page.success) return shapeFailure('an x402 discovery page ({ items: [...] })', page.issues[0]);
  const total = v.is(count, page.output.pagination?.total) ? (page.output.pagination?.total as number) : null;
  const items = readItems(page.output.items, (item) => discoveryListing(item, source));
  return { ok: true, ...items, count: page.output.items.length, total };
}

const SearchShape = v.looseObject({
  resources: v.pipe(v.array(v.unknown()), v.maxLength(MAX_PAGE_ITEMS)),
});

/** Reads a discovery search answer (`GET <base>/discovery/search`: `{ resources: [...] }`, docs/x402.md §6.2). */
export function parseSearchPage(value: unknown, source: string): ({ ok: true } & PageItems) | Failure {
  const page = v.safeParse(SearchShape, value);
  if (page.success)
    return { ok: true, ...readItems(page.output.resources, (item) => discoveryListing(item, source)) };
  // Some lists answer a search in the list shape.
  const list = parseDiscoveryPage(value, source);
  return list.ok
    ? { ok: true, listings: list.listings, refused: list.refused, firstRefusal: list.firstRefusal }
    : list;
}

/** Reads one page of an x402scan-style list. */
export function parseX402scanPage(value: unknown, source: string): ({ ok: true } & X402scanPage) | Failure {
  const page = v.safeParse(X402scanShape, value);
  if (!page.success)
    return shapeFailure('an x402scan-style page ({ data: [...], pagination })', page.issues[0]);
  const items = readItems(page.output.data, (item) => x402scanListing(item, source));
  return {
    ok: true,
    ...items,
    count: page.output.data.length,
    hasNext: page.output.pagination.has_next_page,
  };
}

/** Reads an origin's `/.well-known/x402` document. */
export function parseWellKnown(value: unknown, source: string): ({ ok: true } & PageItems) | Failure {
  const doc = v.safeParse(WellKnownShape, value);
  if (!doc.success) return shapeFailure('a /.well-known/x402 document ({ resources: [...] })', doc.issues[0]);
  const output = doc.output as { resources?: unknown[]; items?: unknown[] };
  if (output.resources !== undefined) {
    return {
      ok: true,
      ...readItems(output.resources, (url) =>
        parseSourceListing({ url, method: 'GET', option: null, source, example: null }),
      ),
    };
  }
  return { ok: true, ...readItems(output.items ?? [], (item) => discoveryListing(item, source)) };
}

/** Which shape a parsed JSON answer has, for sources given without a kind. */
export function detectShape(value: unknown): 'discovery' | 'x402scan' | 'well-known' | 'listings' | null {
  if (Array.isArray(value)) return 'listings';
  if (value === null || typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  if (Array.isArray(record['data']) && typeof record['pagination'] === 'object') return 'x402scan';
  if (Array.isArray(record['resources'])) return 'well-known';
  if (Array.isArray(record['items'])) return 'discovery';
  return null;
}

const Item = v.looseObject({
  resource: v.unknown(),
  type: v.optional(v.unknown()),
  x402Version: v.optional(v.unknown()),
  method: v.optional(v.unknown()),
  accepts: v.optional(v.unknown()),
  extensions: v.optional(v.unknown()),
});

function discoveryListing(item: unknown, source: string) {
  const parsed = v.safeParse(Item, item);
  if (!parsed.success) return { ok: false as const, message: 'not an object with a resource' };
  const it = parsed.output;
  if (it.type !== undefined && it.type !== 'http')
    return { ok: false as const, message: 'not an http resource' };
  const option = chooseOption(listedOptions(it.accepts, it.x402Version));
  const input = bazaarInput(it.extensions) ?? v1Input(it.accepts);
  const method = methodOf(input?.['method'] ?? it.method);
  const resource = isRecord(it.resource) ? it.resource : null;
  const metadata = metadataOf(resource === null ? it : { ...resource, ...it });
  return parseSourceListing({
    url: resource === null ? it.resource : resource['url'],
    method,
    option,
    source,
    example: exampleOf(input),
    metadata: isEmptyMetadata(metadata) ? null : metadata,
    note: listingNoteOf(option),
  });
}

function x402scanListing(item: unknown, source: string) {
  const parsed = v.safeParse(Item, item);
  if (!parsed.success) return { ok: false as const, message: 'not an object with a resource' };
  const it = parsed.output;
  const accepts = Array.isArray(it.accepts) ? it.accepts : [];
  // x402scan's maxAmountRequired is a decimal USD number, not atomic units (docs/x402.md §6.3).
  const options = listedOptions(
    accepts.map((a) => (isRecord(a) ? { ...a, maxAmountRequired: undefined } : a)),
  );
  const option = options[0] ?? null;
  const usd = isRecord(accepts[0]) ? accepts[0]['maxAmountRequired'] : undefined;
  const priceUsd =
    typeof usd === 'number' && Number.isFinite(usd) && usd >= 0 && usd <= 1_000_000 ? usd : null;
  const input = v1Input(accepts);
  const method = methodOf(it.method ?? input?.['method']);
  return parseSourceListing({
    url: it.resource,
    method,
    option,
    priceUsd,
    source,
    example: exampleOf(input),
  });
}

/** `extensions.bazaar.info.input` of a v2 item. */
function bazaarInput(extensions: unknown): Record<string, unknown> | null {
  const info = isRecord(extensions) && isRecord(extensions['bazaar']) ? extensions['bazaar']['info'] : null;
  const input = isRecord(info) ? info['input'] : null;
  return isRecord(input) ? input : null;
}

/** `accepts[].outputSchema.input` of a v1-shaped item. */
function v1Input(accepts: unknown): Record<string, unknown> | null {
  if (!Array.isArray(accepts)) return null;
  for (const accept of accepts.slice(0, 64)) {
    const schema = isRecord(accept) ? accept['outputSchema'] : null;
    const input = isRecord(schema) ? schema['input'] : null;
    if (isRecord(input)) return input;
  }
  return null;
}

function readItems(
  items: unknown[],
  read: (item: unknown) => { ok: true; listing: SourceListing } | { ok: false; message: string },
): PageItems {
  const listings: SourceListing[] = [];
  let refused = 0;
  let firstRefusal: string | null = null;
  for (const [index, item] of items.entries()) {
    const result = read(item);
    if (result.ok) listings.push(result.listing);
    else {
      refused++;
      firstRefusal ??= `item ${index}: ${result.message}`;
    }
  }
  return { listings, refused, firstRefusal };
}

function shapeFailure(expected: string, issue: v.BaseIssue<unknown> | undefined): Failure {
  const path = issue?.path?.map((part) => String(part.key)).join('.') ?? '';
  return { ok: false, message: `not ${expected}${path ? ` (${path}: ${issue?.message})` : ''}` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
