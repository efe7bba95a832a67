/**
 * An x402scan-style list (`{ data, pagination: { page, page_size, has_next_page } }`, docs/x402.md §6.3), paged
 * from `page=0` while `has_next_page` is true.
 */
import { parseX402scanPage } from '../../core/listing-pages.ts';
import { pagedRead, type SourceRead } from './_result.ts';
import type { FetchJson } from './fetch-json.ts';

/** Reads every page of an x402scan-style list. A failing page ends the read; what came before is kept. */
export async function readX402scanList(
  fetchJson: FetchJson,
  name: string,
  base: string,
  paging = { pageSize: 100, maxPages: 2000 },
): Promise<SourceRead> {
  const read = pagedRead(name);
  for (let page = 0; ; page++) {
    if (page >= paging.maxPages) {
      read.stop(`stopped after ${page} pages`);
      break;
    }
    const url = new URL(base);
    url.searchParams.set('page', String(page));
    url.searchParams.set('page_size', String(paging.pageSize));
    const fetched = await fetchJson(url.href);
    const parsed = fetched.ok ? parseX402scanPage(fetched.value, name) : null;
    if (parsed === null || !parsed.ok) {
      read.stop(`page ${page}: ${parsed === null ? (fetched as { note: string }).note : parsed.message}`);
      break;
    }
    if (!read.add(parsed, `page ${page}`) || !parsed.hasNext || parsed.count === 0) break;
  }
  return read.finish();
}
