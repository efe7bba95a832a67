/**
 * What a catalog item says besides its URL and terms (docs/data-files.md `listings.json`): its metadata (service name,
 * tags, description, icon, when it was last updated) for the site and the task matching, and, when the listed terms
 * are not a price Spotcheck can hold an endpoint to, a plain reason why (`listing_note`). A listing on a network or
 * in an asset Spotcheck does not check is kept with that reason, never dropped. Pure; everything read is hostile.
 */
import { isAtomic } from './amount.ts';
import { isCanonicalUsdc, isSupportedMainnet } from './networks.ts';
import { hasHiddenCharacters } from './text.ts';

/** Why a listing's terms give no USD price to hold the endpoint to. Published in `/rules.json`; never renamed. */
export const LISTING_NOTES = [
  'no_payment_option',
  'amounts_disagree',
  'network_unsupported',
  'asset_not_usdc',
  'amount_not_atomic',
] as const;

export type ListingNote = (typeof LISTING_NOTES)[number];

const NOTE_TEXT: Record<ListingNote, string> = {
  no_payment_option: 'The listing names no payment option that could be read.',
  amounts_disagree:
    'The option’s amount and maxAmountRequired differ: the price is read from the field of the listing’s own x402Version, and without one no price is guessed.',
  network_unsupported:
    'The option is on a network that is not a supported mainnet (rules.json supported_networks), or one that is no blockchain network at all (aws:base, iso4217:usd).',
  asset_not_usdc: 'The option is on a supported mainnet but not in its canonical USDC: no USD price is read.',
  amount_not_atomic: 'The option’s amount is not a whole number of atomic units: units are never guessed.',
};

/** The listing notes with their plain words, for `/rules.json`. */
export function listingNoteRules(): Array<{ code: ListingNote; text: string }> {
  return LISTING_NOTES.map((code) => ({ code, text: NOTE_TEXT[code] }));
}

/** The option terms a note is read from (`core/source-listing.ts` `ListedOption`). */
export type NotedOption = {
  network: string | null;
  asset: string | null;
  amount: string | null;
  amountsDisagree: boolean;
};

/**
 * The note of the option a listing is held to; null when it gives a USD price in canonical USDC on a supported
 * mainnet. A disagreement is noted even when the version settled which field is read.
 * @example listingNoteOf({ network: 'aws:base', asset: 'x', amount: '1', amountsDisagree: false }) // 'network_unsupported'
 */
export function listingNoteOf(option: NotedOption | null): ListingNote | null {
  if (option === null) return 'no_payment_option';
  if (option.amountsDisagree) return 'amounts_disagree';
  if (option.network === null || !isSupportedMainnet(option.network)) return 'network_unsupported';
  if (option.asset === null || !isCanonicalUsdc(option.network, option.asset)) return 'asset_not_usdc';
  if (option.amount === null || !isAtomic(option.amount)) return 'amount_not_atomic';
  return null;
}

/** A listing's metadata; absent values are null (tags: empty). */
export type ListingMetadata = {
  serviceName: string | null;
  tags: string[];
  description: string | null;
  iconUrl: string | null;
  /** ISO 8601, from an ISO string or a Unix time in seconds or milliseconds. */
  lastUpdated: string | null;
};

/** Longest description kept (characters); a longer one is cut, not refused. */
export const MAX_DESCRIPTION_CHARS = 1000;
/** Most tags kept, and the longest tag. */
export const MAX_TAGS = 16;
const MAX_TAG_CHARS = 64;

/**
 * Reads the metadata of a discovery item: each member at the top level, else under `metadata`. Whatever is not a
 * bounded, visible text of the right form is null.
 * @example metadataOf({ serviceName: 'Weather', tags: ['weather'] }).serviceName // 'Weather'
 */
export function metadataOf(item: Record<string, unknown>): ListingMetadata {
  const meta = isRecord(item['metadata']) ? item['metadata'] : {};
  const pick = (key: string) => item[key] ?? meta[key];
  const description = textOf(pick('description'), 64 * MAX_DESCRIPTION_CHARS);
  return {
    serviceName: textOf(pick('serviceName') ?? pick('name'), 200),
    tags: tagsOf(pick('tags')),
    description: description === null ? null : cut(description, MAX_DESCRIPTION_CHARS),
    iconUrl: iconUrlOf(pick('iconUrl')),
    lastUpdated: instantOf(pick('lastUpdated') ?? pick('updatedAt')),
  };
}

/** True when nothing of the metadata was given. */
export function isEmptyMetadata(m: ListingMetadata): boolean {
  return (
    m.serviceName === null &&
    m.tags.length === 0 &&
    m.description === null &&
    m.iconUrl === null &&
    m.lastUpdated === null
  );
}

/** Text shown to people: well-formed, no hidden or control characters but plain whitespace (folded to spaces). */
export function textOf(value: unknown, max: number): string | null {
  if (typeof value !== 'string' || value.length > max || /\p{Cs}/u.test(value)) return null;
  const text = value.replace(/[\t\n\r]+/g, ' ').trim();
  if (text.length === 0 || /\p{Cc}/u.test(text) || hasHiddenCharacters(text)) return null;
  return text;
}

function tagsOf(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const tags = new Set<string>();
  for (const tag of value.slice(0, 64)) {
    const text = textOf(tag, MAX_TAG_CHARS);
    if (text !== null) tags.add(text);
    if (tags.size === MAX_TAGS) break;
  }
  return [...tags];
}

/** An http(s) URL without userinfo, at most 2048 characters. */
function iconUrlOf(value: unknown): string | null {
  const text = textOf(value, 2048);
  if (text === null || !URL.canParse(text)) return null;
  const url = new URL(text);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) return null;
  return url.href;
}

/** An ISO string, or a Unix time (seconds below 10^11, else milliseconds), as ISO 8601; null when not a date. */
export function instantOf(value: unknown): string | null {
  let ms: number;
  if (typeof value === 'number' && Number.isFinite(value) && value > 0)
    ms = value < 1e11 ? value * 1000 : value;
  else if (typeof value === 'string' && value.length <= 40 && /^\d{4}-\d{2}-\d{2}/.test(value))
    ms = Date.parse(value);
  else return null;
  if (!Number.isFinite(ms) || ms > 8.64e15) return null;
  return new Date(ms).toISOString();
}

/** Cuts at a code point boundary. */
function cut(text: string, max: number): string {
  const points = [...text];
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
