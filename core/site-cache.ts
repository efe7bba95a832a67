/**
 * Cache headers of the built site, one rule for both places that serve it: the server's static handler
 * (`api/site.ts`) and the `_headers` file written into the build for static hosts and CDNs (docs/site.md).
 */

export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Listings change with each crawl and badges with the clock: five minutes, like the JSON routes. */
export const SHORT = 'public, max-age=300';

/** The rules in `_headers` order: the first pattern that matches a path wins. */
export const SITE_CACHE_RULES: ReadonlyArray<{ pattern: string; test: RegExp; cacheControl: string }> = [
  // Asset names carry a content hash; a signed receipt file never changes once published.
  { pattern: '/_astro/*', test: /^\/_astro\//, cacheControl: IMMUTABLE },
  { pattern: '/receipts/*.json', test: /^\/receipts\/[^/]+\.json$/, cacheControl: IMMUTABLE },
  { pattern: '/*', test: /^\//, cacheControl: SHORT },
];

/**
 * The Cache-Control of a site path.
 * @example siteCacheControl('/_astro/app.1a2b.css') // 'public, max-age=31536000, immutable'
 */
export function siteCacheControl(path: string): string {
  return SITE_CACHE_RULES.find((rule) => rule.test.test(path))?.cacheControl ?? SHORT;
}

/** The `_headers` file (Netlify and Cloudflare Pages format) that carries these rules to a static host. */
export function headersFile(): string {
  const blocks = SITE_CACHE_RULES.map((rule) => `${rule.pattern}\n  Cache-Control: ${rule.cacheControl}\n`);
  return `${['# Cache headers of the Spotcheck site (core/site-cache.ts); see docs/site.md.', ...blocks].join('\n')}\n  X-Content-Type-Options: nosniff\n`;
}
