/**
 * What reading one listing source gives (internal to `crawl/sources/`): its listings and docs/api.md §2.10's `sources`
 * entry.
 */
import type { PageItems } from '../../core/listing-pages.ts';
import {
  itemsNote,
  MAX_SOURCE_ITEMS,
  type SourceListing,
  type SourceReport,
} from '../../core/source-listing.ts';

/** One source read: its listings and its report. */
export type SourceRead = { name: string; listings: SourceListing[]; report: SourceReport };

/** A failed source: no listings, `ok: false`, the note. */
export function failedSource(name: string, note: string): SourceRead {
  return { name, listings: [], report: { ok: false, items: 0, note, skipped: false } };
}

/** A configured source that was not read (docs/api.md §2.10 `skipped`). */
export function skippedSource(name: string, note: string): SourceRead {
  return { name, listings: [], report: { ok: false, items: 0, note, skipped: true } };
}

/**
 * Gathers the pages of a paged list. `add` takes one good page and says whether to go on (false at
 * {@link MAX_SOURCE_ITEMS}); `stop` records why reading ended early; `finish` gives the read. A list that failed
 * mid-way is not `ok` but keeps what it gave.
 */
export function pagedRead(name: string) {
  const listings: SourceListing[] = [];
  let refused = 0;
  let firstRefusal: string | null = null;
  let pages = 0;
  let stopped: string | null = null;
  return {
    add(page: PageItems, where: string): boolean {
      pages++;
      listings.push(...page.listings);
      refused += page.refused;
      firstRefusal ??= page.firstRefusal === null ? null : `${where}, ${page.firstRefusal}`;
      if (listings.length < MAX_SOURCE_ITEMS) return true;
      stopped = `stopped at ${MAX_SOURCE_ITEMS} items`;
      return false;
    },
    stop(reason: string): void {
      stopped = reason;
    },
    get pages() {
      return pages;
    },
    finish(): SourceRead {
      const note = `${pages} page${pages === 1 ? '' : 's'}, ${itemsNote(listings.length, refused, firstRefusal)}`;
      return {
        name,
        listings,
        report: {
          ok: stopped === null,
          items: listings.length,
          note: stopped === null ? note : `${note}; ${stopped}`,
          skipped: false,
        },
      };
    },
  };
}
