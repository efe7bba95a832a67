/**
 * Circle's discovery list, the third default source (`data/sources.json`; docs/decisions.md "Circle's discovery list"
 * cites Circle's pages): `GET https://api.circle.com/v2/x402/discovery/resources`, public, with `type=http`, `limit`
 * and `offset`, answering the x402 discovery list's page (`{ x402Version, items, pagination: { limit, offset,
 * total } }`), so it is paged as the CDP list is (`crawl/sources/discovery-list.ts`). Its items are discovery items
 * whose service details sit under `metadata`: the method as `metadata.method`, the service's name and tags under
 * `metadata.provider`, the endpoint's description as `metadata.description`. Each item is read with those lifted to
 * where the discovery reader finds them, a field the item itself carries winning.
 */

import type { SourceRead } from './_result.ts';
import { type DiscoveryPaging, readDiscoveryList } from './discovery-list.ts';
import type { FetchJson } from './fetch-json.ts';

/** Circle's list pages as CDP's does: 100 an answer, at most 2,000 answers. */
export const CIRCLE_PAGING: DiscoveryPaging = { limit: 100, maxPages: 2000 };

/** Reads every page of Circle's list. A failing page ends the read; what came before is kept. */
export function readCircleList(
  fetchJson: FetchJson,
  name: string,
  base: string,
  paging: DiscoveryPaging = CIRCLE_PAGING,
): Promise<SourceRead> {
  return readDiscoveryList(
    async (url) => {
      const fetched = await fetchJson(url);
      return fetched.ok ? { ...fetched, value: withLiftedItems(fetched.value) } : fetched;
    },
    name,
    base,
    paging,
  );
}

/** The page with each item's `metadata` fields lifted; anything not of the expected shape is left as it came. */
function withLiftedItems(page: unknown): unknown {
  if (!isRecord(page) || !Array.isArray(page['items'])) return page;
  return { ...page, items: page['items'].map(lifted) };
}

/** One item with `metadata.method`, `metadata.description` and `metadata.provider`'s name and tags lifted. */
function lifted(item: unknown): unknown {
  if (!isRecord(item) || !isRecord(item['metadata'])) return item;
  const meta = item['metadata'];
  const provider = isRecord(meta['provider']) ? meta['provider'] : {};
  const given = (key: string, value: unknown) =>
    item[key] === undefined && value !== undefined ? { [key]: value } : {};
  return {
    ...item,
    ...given('method', meta['method']),
    ...given('serviceName', provider['name']),
    ...given('tags', provider['tags']),
    ...given('description', meta['description'] ?? provider['description']),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
