/**
 * Target URLs: what a caller may ask Spotcheck to probe, and the `dedupe` normalization of docs/api.md §2.10 that keys
 * the probe cache, the history of an endpoint and the skip listing.
 */

/** Longest target URL accepted, in UTF-16 code units of the input as sent. */
export const MAX_URL_LENGTH = 2048;

export type ParsedTargetUrl =
  /** `url` is the URL as it is requested (no fragment: it is never sent); `normalized` its §2.10 dedupe form. */
  { ok: true; url: URL; normalized: string } | { ok: false; code: 'bad_url'; message: string };

/**
 * Parses a caller-supplied target URL: absolute `http:`/`https:` with a host, at most 2048 characters.
 *
 * A URL with userinfo (`user:pw@`) is refused here: the gate would refuse it anyway, and a
 * verdict would publish the credentials in a receipt, the receipt list and the by-url index. Private addresses
 * and odd ports pass on purpose: the SSRF gate (`core/ssrf.ts`) refuses them and must see them to say so.
 *
 * @example parseTargetUrl('HTTPS://API.example/x/?b=2&a=1') // { ok: true, normalized: 'https://api.example/x?a=1&b=2', … }
 */
export function parseTargetUrl(input: string): ParsedTargetUrl {
  if (typeof input !== 'string' || input.length === 0) return bad('the URL is empty');
  if (input.length > MAX_URL_LENGTH) return bad(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  // The WHATWG parser silently deletes tabs and newlines inside a URL; refuse them so that what the caller
  // wrote and what gets probed cannot differ.
  if (/[\u0000-\u001f\u007f]/.test(input)) return bad('the URL contains control characters');
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return bad('the URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return bad('only http and https URLs can be checked');
  if (url.hostname === '') return bad('the URL has no host');
  if (url.username !== '' || url.password !== '') {
    return bad(
      'the URL contains a user name or password; credentials are never sent to a seller or published',
    );
  }
  // The fragment never reaches the server: dropping it makes `url.href` name exactly what is requested.
  url.hash = '';
  return { ok: true, url, normalized: normalizeUrl(url) };
}

/**
 * The `dedupe` rule of docs/api.md §2.10: lower-case scheme and host, no default port, no fragment, no trailing slash
 * (the root too), query sorted by key, and no userinfo. Everything else (path case, percent-escapes in the path)
 * is kept as the WHATWG URL serializer writes it.
 *
 * The query is re-serialized through `URLSearchParams`, so `?a` and `?a=` (and `%20` and `+`) normalize alike;
 * that is wanted for dedupe. Throws `TypeError` for a string that is not a URL; use {@link parseTargetUrl} for
 * untrusted input.
 *
 * @example normalizeUrl('https://A.example:443/Path/?z=1&a=2#top') // 'https://a.example/Path?a=2&z=1'
 */
export function normalizeUrl(input: string | URL): string {
  // Copy so that callers' URL objects are never mutated.
  const url = new URL(typeof input === 'string' ? input : input.href);
  // Special schemes already lose default ports when parsed; http/https are the ones that matter (docs/api.md §2.10).
  if ((url.protocol === 'http:' && url.port === '80') || (url.protocol === 'https:' && url.port === '443')) {
    url.port = '';
  }
  const params = new URLSearchParams(url.search);
  params.sort(); // stable: duplicate keys keep their relative order
  const query = params.toString();
  const search = query === '' ? '' : `?${query}`;
  if (url.host === '') {
    // Opaque URLs (no authority) have no host to lower-case; drop only the fragment and trailing slashes.
    return `${url.protocol}${stripTrailingSlashes(url.pathname)}${search}`;
  }
  // Userinfo is dropped: a normalized URL keys public indexes, and credentials are never published.
  return `${url.protocol}//${url.host.toLowerCase()}${stripTrailingSlashes(url.pathname)}${search}`;
}

function stripTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}

function bad(message: string): ParsedTargetUrl {
  return { ok: false, code: 'bad_url', message };
}
