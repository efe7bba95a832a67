/**
 * Hosted keys (docs/api.md §5.4, docs/api.md §5.4): `sck_live_<id>_<secret>`. Only a hash of the secret is stored and a
 * presented secret is compared in constant time. Pure: the random bytes of a new key come in as a parameter.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

export const SERVICE_KEY_PREFIX = 'sck_live_';
const KEY = /^sck_live_([a-z0-9]{12})_([A-Za-z0-9]{43})$/;
const ALPHABET_ID = 'abcdefghijklmnopqrstuvwxyz0123456789';
const ALPHABET_SECRET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A key split into its public id and its secret. */
export type ServiceKey = { id: string; secret: string };

/**
 * Splits a presented key; null when it does not have the live-key shape (a 401, never a free answer).
 * @example parseServiceKey('sck_live_ab12cd34ef56_…') // { id: 'ab12cd34ef56', secret: '…' }
 */
export function parseServiceKey(text: string): ServiceKey | null {
  const match = KEY.exec(text);
  return match?.[1] && match[2] ? { id: match[1], secret: match[2] } : null;
}

/** The text of a key. */
export function formatServiceKey(key: ServiceKey): string {
  return `${SERVICE_KEY_PREFIX}${key.id}_${key.secret}`;
}

/**
 * A new key from `random` bytes: a 12-character id and a 43-character secret (about 256 bits), drawn without
 * modulo bias.
 */
export function newServiceKey(random: (n: number) => Uint8Array): ServiceKey {
  return { id: draw(ALPHABET_ID, 12, random), secret: draw(ALPHABET_SECRET, 43, random) };
}

/**
 * The stored hash of a secret: sha256 hex. The secret is 256 random bits, so a fast hash is enough; a slow one
 * would only cost every hosted call.
 */
export function hashSecret(secret: string): string {
  return bytesToHex(sha256(utf8ToBytes(secret)));
}

/** Compares two hex hashes in time that depends only on their length. */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function draw(alphabet: string, length: number, random: (n: number) => Uint8Array): string {
  // Rejection sampling: bytes at or above the largest multiple of the alphabet size are dropped.
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}
