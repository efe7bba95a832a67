/**
 * A watch's management token (docs/api.md "Watches"): 256 random bits shown once in the answer that made the
 * watch; only its sha256 is stored, and a presented token is compared with it in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { base64url } from '../core/receipt.ts';

/** The header a token is presented in. */
export const WATCH_TOKEN_HEADER = 'x-watch-token';

/** A new token and the hash to store. */
export function newWatchToken(random: (n: number) => Uint8Array): { token: string; hash: string } {
  const token = `wt_${base64url(random(32))}`;
  return { token, hash: tokenHash(token) };
}

/** The stored form of a token: sha256, hex. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** True when `presented` is the token whose hash is `stored`; constant time over the hashes. */
export function tokenMatches(presented: string | null, stored: string): boolean {
  if (presented === null || presented.length === 0 || presented.length > 256) return false;
  const a = Buffer.from(tokenHash(presented), 'hex');
  const b = Buffer.from(stored, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
