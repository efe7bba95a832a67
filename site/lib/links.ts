/**
 * The site's own paths, one place for each: they work on any static host (no query strings) and through the
 * server, which also answers the spec's `?page=N` forms (`api/site.ts`).
 */

/** HTML page `n` of the skip listing. */
export function skipsPagePath(n: number): string {
  return n <= 1 ? '/v1/skips/' : `/v1/skips/page/${n}/`;
}

/** JSON page `n` of the skip listing: the crawl's `skips/N.json`, byte for byte. */
export function skipsJsonPath(n: number): string {
  return n <= 1 ? '/v1/skips.json' : `/v1/skips/${n}.json`;
}

export function receiptPath(id: string): string {
  return `/receipts/${id}/`;
}

/** The raw signed receipt file, byte for byte as the crawl wrote it. */
export function receiptFilePath(id: string): string {
  return `/receipts/${id}.json`;
}

export function badgePath(host: string, kind: 'page' | 'svg' | 'png' | 'json'): string {
  return kind === 'page' ? `/badge/${host}/` : `/badge/${host}.${kind}`;
}

/** The receipt id at the end of a permalink (`{base}/v1/receipts/<id>`), or null. */
export function receiptIdOf(permalink: string): string | null {
  const match = /\/((?:sc|ps)-[a-z2-7]{26})$/.exec(permalink);
  return match?.[1] ?? null;
}
