/**
 * The public site's paths for an endpoint, a host and a task (docs/site.md "Endpoint, host and task pages";
 * docs/decisions.md "Endpoint page paths"). One place, so the build, the receipt pages, the listings and the badge
 * pages link to the same page. Pure.
 *
 * An endpoint is its normalized URL and method (docs/data-files.md "Dedupe"); its page key is the first 16 hex digits
 * of SHA-256 of `"<METHOD> <url_norm>"`: URL-safe, of one length whatever the URL, stable across builds and runs,
 * and with 64 bits no two of a few million endpoints meet.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { normalizeUrl } from './url.ts';

/** Hex digits of an endpoint key. */
export const ENDPOINT_KEY_LENGTH = 16;

/**
 * The page key of the endpoint `urlNorm` (already normalized, `core/url.ts` `normalizeUrl`) requested with `method`.
 * @example endpointKey('https://a.example/x', 'GET') // 16 hex digits
 */
export function endpointKey(urlNorm: string, method: string): string {
  return bytesToHex(sha256(utf8ToBytes(`${method.toUpperCase()} ${urlNorm}`))).slice(0, ENDPOINT_KEY_LENGTH);
}

/** The key of a URL as listed or requested (normalized first); null for a string that is not a URL. */
export function endpointKeyOfUrl(url: string, method: string): string | null {
  try {
    return endpointKey(normalizeUrl(url), method);
  } catch {
    return null;
  }
}

/** The HTML page of an endpoint. */
export function endpointPagePath(key: string): string {
  return `/endpoints/${key}/`;
}

/** The JSON twin of an endpoint's page. */
export function endpointJsonPath(key: string): string {
  return `/endpoints/${key}.json`;
}

/** The page of a host (lower-case, with a non-default port, as in the receipt index and the badge paths). */
export function hostPagePath(host: string): string {
  return `/hosts/${host}/`;
}

export function hostJsonPath(host: string): string {
  return `/hosts/${host}.json`;
}

/** The page of a task of the catalog (task names are `[a-z0-9._-]`). */
export function taskPagePath(task: string): string {
  return `/tasks/${task}/`;
}
