/**
 * The x402 discovery list (`GET <base>/discovery/resources?type=http&limit=&offset=`, CDP and PayAI; docs/x402.md
 * §6.2), paged to the end: by `pagination.total` when the list gives one, else until an empty page.
 */
import { parseDiscoveryPage } from '../../core/listing-pages.ts';
import { pagedRead, type SourceRead } from './_result.ts';
import type { FetchJson } from './fetch-json.ts';

/** Paging limits; the defaults suit CDP (limit clamped to 20…1000). */
export type DiscoveryPaging = { limit: number; maxPages: number };

const DEFAULT_PAGING: DiscoveryPaging = { limit: 100, maxPages: 2000 };

/** Reads every page of a discovery list. A failing page ends the read; what came before is kept. */
export async function readDiscoveryList(
  fetchJson: FetchJson,
  name: string,
  base: string,
  paging: DiscoveryPaging = DEFAULT_PAGING,
): Promise<SourceRead> {
  const read = pagedRead(name);
  let offset = 0;
  let previousFirst: string | null = null;
  for (;;) {
    if (read.pages >= paging.maxPages) {
      read.stop(`stopped after ${read.pages} pages`);
      break;
    }
    const fetched = await fetchJson(pageUrl(base, paging.limit, offset));
    const page = fetched.ok ? parseDiscoveryPage(fetched.value, name) : null;
    if (page === null || !page.ok) {
      read.stop(
        `page at offset ${offset}: ${page === null ? (fetched as { note: string }).note : page.message}`,
      );
      break;
    }
    if (page.count === 0) break;
    // A list that ignores `offset` answers the same page for ever: stop at the first repeat.
    const first = page.listings[0]?.urlNorm ?? null;
    if (first !== null && first === previousFirst) {
      read.stop(`the list repeats itself at offset ${offset}`);
      break;
    }
    previousFirst = first;
    if (!read.add(page, `offset ${offset}`)) break;
    offset += page.count;
    if (page.total !== null && offset >= page.total) break;
  }
  return read.finish();
}

/** `<base>?type=http&limit=&offset=`, keeping any query the base already has. */
function pageUrl(base: string, limit: number, offset: number): string {
  const url = new URL(base);
  url.searchParams.set('type', 'http');
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('offset', String(offset));
  return url.href;
}
