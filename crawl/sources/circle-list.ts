/**
 * Circle's discovery list, the third default source (`data/sources.json`). Its paging is not published where this
 * project could read it, so the adapter assumes, and docs/decisions.md "Circle's discovery list" says so: `GET <base>`
 * with `limit=` (and `type=http`), items shaped like the x402 discovery list's (docs/x402.md §6.2) under `items`,
 * `resources` or `data`; the next page named by a cursor (`pagination.nextCursor`, `next_cursor`…) sent back as
 * `cursor=`, else by `offset=` as the CDP list pages. Every parameter name is configurable, so a list that names
 * them otherwise needs a change of {@link CirclePaging}, not of the reader.
 */
import { parseCursorPage } from '../../core/listing-pages.ts';
import { pagedRead, type SourceRead } from './_result.ts';
import type { FetchJson } from './fetch-json.ts';

/** How the list is paged; {@link CIRCLE_PAGING} holds the assumed defaults. */
export type CirclePaging = {
  limit: number;
  maxPages: number;
  limitParam: string;
  cursorParam: string;
  offsetParam: string;
  /** Extra query members every page carries (`type=http`). */
  query: Record<string, string>;
};

/** The assumed paging of Circle's list (docs/decisions.md "Circle's discovery list"). */
export const CIRCLE_PAGING: CirclePaging = {
  limit: 100,
  maxPages: 2000,
  limitParam: 'limit',
  cursorParam: 'cursor',
  offsetParam: 'offset',
  query: { type: 'http' },
};

/**
 * Reads every page: by cursor while the list gives one, else by offset until `pagination.total`, a short or empty
 * page. A failing page ends the read and what came before is kept; a list that answers the same page again (a
 * cursor or offset it ignores) is stopped at the repeat.
 */
export async function readCircleList(
  fetchJson: FetchJson,
  name: string,
  base: string,
  paging: CirclePaging = CIRCLE_PAGING,
): Promise<SourceRead> {
  const read = pagedRead(name);
  let at: { cursor: string } | { offset: number } = { offset: 0 };
  let previousFirst: string | null = null;
  for (;;) {
    if (read.pages >= paging.maxPages) {
      read.stop(`stopped after ${read.pages} pages`);
      break;
    }
    const where = 'cursor' in at ? `cursor ${at.cursor.slice(0, 40)}` : `offset ${at.offset}`;
    const fetched = await fetchJson(pageUrl(base, paging, at));
    const page = fetched.ok ? parseCursorPage(fetched.value, name) : null;
    if (page === null || !page.ok) {
      read.stop(`page at ${where}: ${page === null ? (fetched as { note: string }).note : page.message}`);
      break;
    }
    if (page.count === 0) break;
    const first = page.listings[0]?.urlNorm ?? null;
    if (first !== null && first === previousFirst) {
      read.stop(`the list repeats itself at ${where}`);
      break;
    }
    previousFirst = first;
    if (!read.add(page, where)) break;
    if (page.cursor !== null) at = { cursor: page.cursor };
    else if ('cursor' in at) break;
    else {
      const offset: number = at.offset + page.count;
      if ((page.total !== null && offset >= page.total) || (page.total === null && page.count < paging.limit))
        break;
      at = { offset };
    }
  }
  return read.finish();
}

/** The URL of one page, keeping any query the base already has. */
function pageUrl(base: string, paging: CirclePaging, at: { cursor: string } | { offset: number }): string {
  const url = new URL(base);
  for (const [key, value] of Object.entries(paging.query)) url.searchParams.set(key, value);
  url.searchParams.set(paging.limitParam, String(paging.limit));
  if ('cursor' in at) url.searchParams.set(paging.cursorParam, at.cursor);
  else if (at.offset > 0) url.searchParams.set(paging.offsetParam, String(at.offset));
  return url.href;
}
