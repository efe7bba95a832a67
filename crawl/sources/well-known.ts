/**
 * An origin's `/.well-known/x402` (docs/x402.md §6.3): the resources it lists, probed with GET and no expectation
 * beyond the live 402 (the document carries no price or wallet). Its items of the document's own origin are
 * first-party evidence: they outrank third-party listings of the same URL (`core/listing-dispute.ts`).
 */
import { parseWellKnown } from '../../core/listing-pages.ts';
import { itemsNote } from '../../core/source-listing.ts';
import { failedSource, type SourceRead } from './_result.ts';
import type { FetchJson } from './fetch-json.ts';

/** `https://o.example/x` → `https://o.example/.well-known/x402`; a URL already naming the document is kept. */
export function wellKnownUrl(origin: string): string {
  const url = new URL(origin);
  return url.pathname.startsWith('/.well-known/x402') ? url.href : `${url.origin}/.well-known/x402`;
}

/** Reads one origin's document. */
export async function readWellKnown(fetchJson: FetchJson, name: string, origin: string): Promise<SourceRead> {
  const fetched = await fetchJson(wellKnownUrl(origin));
  if (!fetched.ok) return failedSource(name, fetched.note);
  const doc = parseWellKnown(fetched.value, name);
  if (!doc.ok) return failedSource(name, doc.message);
  const own = new URL(wellKnownUrl(origin)).origin;
  return {
    name,
    // Only the origin speaks under its /.well-known/; what it says of other origins is a third-party listing.
    listings: doc.listings.map((l) => (new URL(l.url).origin === own ? { ...l, firstParty: true } : l)),
    report: {
      ok: true,
      items: doc.listings.length,
      note: itemsNote(doc.listings.length, doc.refused, doc.firstRefusal),
      skipped: false,
    },
  };
}
