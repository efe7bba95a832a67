/**
 * Listing sources: what the crawl reads endpoints from, given on the command line (`--source`, repeatable) or by
 * `data/sources.json`. Every source ends in a {@link SourceRead}: its listings and docs/api.md §2.10's `sources` entry.
 * A source that fails or answers garbage is reported, never fatal.
 */
import { basename } from 'node:path';
import * as v from 'valibot';
import { detectShape, parseWellKnown } from '../../core/listing-pages.ts';
import { readListingRecords } from '../../core/listings.ts';
import { itemsNote, SOURCE_NAME, type SourceListing } from '../../core/source-listing.ts';
import { failedSource, type SourceRead } from './_result.ts';
import { readCircleList } from './circle-list.ts';
import { readDiscoveryList } from './discovery-list.ts';
import type { FetchJson } from './fetch-json.ts';
import { readListingsFile } from './listings-file.ts';
import { readWellKnown } from './well-known.ts';
import { readX402scanList } from './x402scan-list.ts';

export const SOURCE_KINDS = ['discovery', 'circle', 'x402scan', 'well-known', 'file'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** A source to read. `auto` decides by the URL, then by the shape of the first answer. */
export type SourceSpec = { name: string; kind: SourceKind | 'auto'; location: string };

const KIND_PREFIX = /^(discovery|circle|x402scan|well-known|file):(.+)$/;

/**
 * A `--source` argument: a URL or a file path, optionally prefixed by its kind (`x402scan:https://…`). The name
 * is the URL's host or the file's base name, made unique among `taken`.
 * @example sourceSpecOf('https://x.example/discovery/resources', new Set()) // { name: 'x.example', kind: 'auto', … }
 */
export function sourceSpecOf(argument: string, taken: Set<string>): SourceSpec {
  const match = KIND_PREFIX.exec(argument);
  const kind = (match?.[1] ?? 'auto') as SourceKind | 'auto';
  const location = match?.[2] ?? argument;
  const isUrl = kind !== 'file' && /^https?:\/\//i.test(location) && URL.canParse(location);
  const raw = isUrl ? new URL(location).host : basename(location).replace(/\.json$/i, '');
  const base =
    raw
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '')
      .slice(0, 56) || 'source';
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  taken.add(name);
  return { name, kind: isUrl ? kind : 'file', location };
}

const Config = v.object({
  sources: v.array(
    v.object({
      name: v.pipe(v.string(), v.regex(SOURCE_NAME)),
      kind: v.picklist(SOURCE_KINDS),
      url: v.pipe(v.string(), v.url()),
    }),
  ),
});

/** Reads `data/sources.json` (the default sources); throws a `TypeError` for a malformed file (our own). */
export function parseSourceConfig(value: unknown): SourceSpec[] {
  const parsed = v.safeParse(Config, value);
  if (!parsed.success) throw new TypeError(`data/sources.json: ${parsed.issues[0].message}`);
  return parsed.output.sources.map((s) => ({ name: s.name, kind: s.kind, location: s.url }));
}

/** Reads one source. Never throws for anything the source does. */
export async function readSource(fetchJson: FetchJson, spec: SourceSpec): Promise<SourceRead> {
  const { name, location } = spec;
  switch (spec.kind) {
    case 'file':
      return readListingsFile(name, location);
    case 'discovery':
      return readDiscoveryList(fetchJson, name, location);
    case 'circle':
      return readCircleList(fetchJson, name, location);
    case 'x402scan':
      return readX402scanList(fetchJson, name, location);
    case 'well-known':
      return readWellKnown(fetchJson, name, location);
    case 'auto':
      return readAuto(fetchJson, name, location);
  }
}

async function readAuto(fetchJson: FetchJson, name: string, location: string): Promise<SourceRead> {
  const url = new URL(location);
  if (/\/discovery\/resources\/?$/.test(url.pathname)) return readDiscoveryList(fetchJson, name, location);
  if (url.pathname === '/' || url.pathname.startsWith('/.well-known/x402'))
    return readWellKnown(fetchJson, name, location);
  const fetched = await fetchJson(location);
  if (!fetched.ok) return failedSource(name, fetched.note);
  switch (detectShape(fetched.value)) {
    case 'discovery':
      return readDiscoveryList(fetchJson, name, location);
    case 'x402scan':
      return readX402scanList(fetchJson, name, location);
    case 'well-known': {
      const doc = parseWellKnown(fetched.value, name);
      if (!doc.ok) return failedSource(name, doc.message);
      return read(name, doc.listings, itemsNote(doc.listings.length, doc.refused, doc.firstRefusal));
    }
    case 'listings': {
      const records = readListingRecords(fetched.value as unknown[]);
      return read(
        name,
        records.listings,
        itemsNote(records.listings.length, records.refused, records.firstRefusal),
      );
    }
    default:
      return failedSource(
        name,
        'the answer is not a discovery list, an x402scan list, a /.well-known/x402 or a listings file',
      );
  }
}

function read(name: string, listings: SourceListing[], note: string): SourceRead {
  return { name, listings, report: { ok: true, items: listings.length, note, skipped: false } };
}
