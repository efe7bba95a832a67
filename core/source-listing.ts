/**
 * What a listing source says about one endpoint (docs/api.md §2.10): the listing the crawl checks the
 * live 402 against (price, wallet, network) and how to call the endpoint (method, example parameters).
 * Pure: the adapters in `crawl/sources/` fetch, the parsers here read. Everything a source sends is hostile.
 */
import * as v from 'valibot';
import type { ListingMetadata, ListingNote } from './listing-terms.ts';
import type { HttpMethod, Listing } from './model.ts';
import { normalizeNetwork } from './networks.ts';
import { optionPriceUsd } from './payment.ts';
import { isPlainIdentifier } from './text.ts';
import { parseTargetUrl } from './url.ts';

/** Example parameters a listing gives, used only when the bare URL answered 4xx (docs/api.md §2.10). */
export type ListingExample = { query: Record<string, string> | null; body: unknown };

/** One endpoint named by a source, normalized (absent values are null); `source` is the name it counts for in
 *  `lists` and `listed_in`, `urlNorm` the `dedupe` normalization of docs/api.md §2.10. `firstParty` is set only by the
 *  `/.well-known/x402` source, for a URL of the document's own origin (`core/listing-dispute.ts`). `metadata` is what
 *  a catalog item says of its service, `note` why its terms give no price (`core/listing-terms.ts`); both are absent
 *  when the source says nothing of the kind. */
export type SourceListing = Listing & {
  urlNorm: string;
  example: ListingExample | null;
  firstParty?: boolean;
  metadata?: ListingMetadata;
  note?: ListingNote;
};

/** docs/api.md §2.10 `sources` entry: how reading one source went. */
export type SourceReport = { ok: boolean; items: number; note: string; skipped: boolean };

/** A source name as it appears in listings and reports. */
export const SOURCE_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The most items one source may contribute; past it the rest is refused and the note says so. */
export const MAX_SOURCE_ITEMS = 200_000;

/** A bounded identifier a receipt may carry as seen (`core/text.ts`: no whitespace, nothing hidden). */
export const identifier = (max: number) =>
  v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(max),
    v.check(isPlainIdentifier, 'must hold no whitespace or hidden characters'),
  );

/**
 * The payment option of a listing, v2 (`amount`) or v1 (`maxAmountRequired`) shaped. `amountsDisagree`: the option
 * gave both fields with different values (`core/listing-terms.ts` `amounts_disagree`).
 */
export type ListedOption = {
  network: string | null;
  asset: string | null;
  payTo: string | null;
  amount: string | null;
  amountsDisagree: boolean;
};

const Option = v.looseObject({
  network: v.optional(v.unknown()),
  asset: v.optional(v.unknown()),
  payTo: v.optional(v.unknown()),
  amount: v.optional(v.unknown()),
  maxAmountRequired: v.optional(v.unknown()),
});

/**
 * Reads the options of a listing, keeping only well-formed bounded strings; at most 64 are looked at. The amount is
 * read from the field of the listing's own `x402Version` (`amount` in v2, `maxAmountRequired` in v1); without a
 * version, from the one field given, and from neither when both are given and differ (never guessed).
 */
export function listedOptions(accepts: unknown, version: unknown = null): ListedOption[] {
  if (!Array.isArray(accepts)) return [];
  const out: ListedOption[] = [];
  for (const item of accepts.slice(0, 64)) {
    const parsed = v.safeParse(Option, item);
    if (!parsed.success) continue;
    const o = parsed.output;
    const network = identifierOf(o.network, 64);
    out.push({
      network: network === null ? null : normalizeNetwork(network.replace(/_/g, '-')),
      asset: identifierOf(o.asset, 128),
      payTo: identifierOf(o.payTo, 128),
      ...amountOf(amountText(o.amount), amountText(o.maxAmountRequired), version),
    });
  }
  return out;
}

/** The amount of one option by the listing's version, and whether its two fields disagree. */
function amountOf(
  amount: string | null,
  maxAmountRequired: string | null,
  version: unknown,
): { amount: string | null; amountsDisagree: boolean } {
  const amountsDisagree = amount !== null && maxAmountRequired !== null && amount !== maxAmountRequired;
  if (version === 2) return { amount: amount ?? maxAmountRequired, amountsDisagree };
  if (version === 1) return { amount: maxAmountRequired ?? amount, amountsDisagree };
  return { amount: amountsDisagree ? null : (amount ?? maxAmountRequired), amountsDisagree };
}

/** An amount as a bounded identifier string; a JSON number is not read (its units would be a guess). */
function amountText(value: unknown): string | null {
  return identifierOf(value, 80);
}

/**
 * The option a listing is held to: the first one in canonical USDC (its price is then known), else the first.
 * @example chooseOption([{ network: 'eip155:8453', asset: BASE_USDC, payTo: '0x…', amount: '10000' }])
 */
export function chooseOption(options: ListedOption[]): ListedOption | null {
  return options.find((o) => usdPrice(o) !== null) ?? options[0] ?? null;
}

/** USD price of an atomic listed option in canonical USDC; null otherwise (units are never guessed). */
export function usdPrice(option: ListedOption): number | null {
  if (option.network === null || option.asset === null || option.amount === null) return null;
  return optionPriceUsd({ network: option.network, asset: option.asset, amount: option.amount });
}

/** A bounded identifier (`core/text.ts` `isPlainIdentifier`), or null: these reach receipts as `expected_*`. */
export function identifierOf(value: unknown, max: number): string | null {
  const text = stringOf(value, max);
  return text !== null && isPlainIdentifier(text) ? text : null;
}

/** A bounded well-formed string (no lone surrogate: RFC 8785 bytes cannot hold one), or null. */
export function stringOf(value: unknown, max: number): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= max && !/\p{Cs}/u.test(value)
    ? value
    : null;
}

/** `GET`/`POST` in any case; anything else (or nothing) is GET, the bare probe of docs/api.md §2.10. */
export function methodOf(value: unknown): HttpMethod {
  return typeof value === 'string' && value.toUpperCase() === 'POST' ? 'POST' : 'GET';
}

/**
 * Example parameters from a bazaar `info.input` (docs/x402.md §6.1) or a v1 `outputSchema.input`: string-valued
 * `queryParams` become the query, `body` is kept as given. Null when there is neither.
 */
export function exampleOf(input: unknown): ListingExample | null {
  if (input === null || typeof input !== 'object') return null;
  const record = input as Record<string, unknown>;
  const query: Record<string, string> = {};
  const params = record['queryParams'];
  if (params !== null && typeof params === 'object' && !Array.isArray(params)) {
    for (const [key, value] of Object.entries(params).slice(0, 32)) {
      const scalar = typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
      const k = stringOf(key, 128);
      const s = stringOf(scalar, 512);
      if (k !== null && s !== null) query[k] = s;
    }
  }
  const body = record['body'];
  const hasQuery = Object.keys(query).length > 0;
  if (!hasQuery && body === undefined) return null;
  return { query: hasQuery ? query : null, body: body === undefined ? null : body };
}

/** Parses a listing from the parts a source gave; `message` says why an item was refused. */
export function parseSourceListing(parts: {
  url: unknown;
  method: HttpMethod;
  option: ListedOption | null;
  priceUsd?: number | null;
  source: string;
  example: ListingExample | null;
  metadata?: ListingMetadata | null;
  note?: ListingNote | null;
}): { ok: true; listing: SourceListing } | { ok: false; message: string } {
  const url = stringOf(parts.url, 2048);
  if (url === null) return { ok: false, message: 'no resource URL' };
  const target = parseTargetUrl(url);
  if (!target.ok) return { ok: false, message: target.message };
  const option = parts.option;
  return {
    ok: true,
    listing: {
      url: target.url.href,
      urlNorm: target.normalized,
      method: parts.method,
      priceUsd: parts.priceUsd !== undefined ? parts.priceUsd : option === null ? null : usdPrice(option),
      network: option?.network ?? null,
      asset: option?.asset ?? null,
      payTo: option?.payTo ?? null,
      source: parts.source,
      example: parts.example,
      ...(parts.metadata ? { metadata: parts.metadata } : {}),
      ...(parts.note ? { note: parts.note } : {}),
    },
  };
}

/** Plain words for what a source gave: `250 items` or `248 items; 2 refused (first: item 7: no resource URL)`. */
export function itemsNote(accepted: number, refused: number, firstRefusal: string | null): string {
  const base = `${accepted} item${accepted === 1 ? '' : 's'}`;
  return refused === 0 ? base : `${base}; ${refused} refused (first: ${firstRefusal})`;
}
