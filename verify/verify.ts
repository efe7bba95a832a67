/**
 * Offline verification of a signed receipt (docs/api.md §2.6), for auditors.
 *
 * Deliberately shares no code with the service's signing path (`core/`, `io/`): canonical bytes come from
 * the `canonicalize` package, Ed25519 from `@noble/ed25519` and the key thumbprint from `@noble/hashes`, so
 * a bug on the signing side cannot hide itself by being repeated here. No Node-only APIs: this module also
 * runs in a browser.
 */
import { verifyAsync } from '@noble/ed25519';
import { sha256 } from '@noble/hashes/sha2.js';
import canonicalize from 'canonicalize';

/** Why a receipt failed; stable snake_case codes. */
export type VerifyFailure =
  | 'not_an_object'
  | 'unsigned'
  | 'missing_kid'
  | 'bad_signature_encoding'
  | 'bad_jwks'
  | 'unknown_kid'
  | 'bad_key'
  | 'kid_not_thumbprint'
  | 'not_canonicalizable'
  | 'bad_signature';

/** The outcome: `ok` with the key used, or a reason. */
export type VerifyResult = { ok: true; kid: string } | { ok: false; kid?: string; reason: VerifyFailure };

/**
 * Verifies a receipt against a JWKS: finds the key by `kid`, checks that `kid` is the RFC 7638 thumbprint
 * of that key, removes `signature`, canonicalizes (RFC 8785) and checks the Ed25519 signature (RFC 8032
 * strict decoding). Never throws: bad input of any kind gives `{ ok: false, reason }`.
 * @example const result = await verifyReceipt(JSON.parse(receiptText), JSON.parse(jwksText))
 */
export async function verifyReceipt(receipt: unknown, jwks: unknown): Promise<VerifyResult> {
  if (!isRecord(receipt)) return { ok: false, reason: 'not_an_object' };
  const { signature, ...unsigned } = receipt;
  if (signature === undefined) return { ok: false, reason: 'unsigned' };
  const kid = unsigned['kid'];
  if (typeof kid !== 'string' || kid === '') return { ok: false, reason: 'missing_kid' };
  const sig = typeof signature === 'string' ? fromBase64url(signature, 64) : null;
  if (sig === null) return { ok: false, kid, reason: 'bad_signature_encoding' };
  if (!isRecord(jwks) || !Array.isArray(jwks['keys'])) return { ok: false, kid, reason: 'bad_jwks' };
  const jwk = jwks['keys'].find((k: unknown) => isRecord(k) && k['kid'] === kid);
  if (!isRecord(jwk)) return { ok: false, kid, reason: 'unknown_kid' };
  const x = jwk['x'];
  const publicKey = typeof x === 'string' ? fromBase64url(x, 32) : null;
  if (jwk['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519' || publicKey === null || typeof x !== 'string') {
    return { ok: false, kid, reason: 'bad_key' };
  }
  if (thumbprint(x) !== kid) return { ok: false, kid, reason: 'kid_not_thumbprint' };
  let message: Uint8Array;
  try {
    const text = canonicalize(unsigned);
    if (text === undefined) return { ok: false, kid, reason: 'not_canonicalizable' };
    message = new TextEncoder().encode(text);
  } catch {
    return { ok: false, kid, reason: 'not_canonicalizable' };
  }
  try {
    const valid = await verifyAsync(sig, message, publicKey, { zip215: false });
    return valid ? { ok: true, kid } : { ok: false, kid, reason: 'bad_signature' };
  } catch {
    return { ok: false, kid, reason: 'bad_signature' };
  }
}

/** RFC 7638 thumbprint of an Ed25519 JWK (required members crv, kty, x in that order, RFC 8037 §2). */
function thumbprint(x: string): string {
  const json = `{"crv":"Ed25519","kty":"OKP","x":${JSON.stringify(x)}}`;
  return toBase64url(sha256(new TextEncoder().encode(json)));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Strict base64url (RFC 4648 §5): no padding, exact length, canonical last character; else null. */
function fromBase64url(text: string, length: number): Uint8Array | null {
  if (text.length !== Math.ceil((length * 8) / 6) || !/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const out = new Uint8Array(length);
  let buffer = 0;
  let bits = 0;
  let i = 0;
  for (const ch of text) {
    buffer = ((buffer << 6) | ALPHABET.indexOf(ch)) & 0xfff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[i++] = (buffer >> bits) & 0xff;
    }
  }
  // Leftover bits must be zero, or two different strings would decode to the same bytes.
  return (buffer & ((1 << bits) - 1)) === 0 ? out : null;
}

function toBase64url(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += ALPHABET[(buffer >> bits) & 63];
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (6 - bits)) & 63];
  return out;
}
