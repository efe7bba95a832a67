/**
 * Standard Webhooks headers signed with the receipt key (docs/api.md "Watches"; docs/decisions.md "Watches"):
 * `webhook-id` (the event's id, the same on every redelivery), `webhook-timestamp` (seconds, of this attempt) and
 * `webhook-signature` as `v1a,<base64 Ed25519 signature>` over `${id}.${timestamp}.${body}`. Anyone verifies it
 * with the public key the JWKS names (`webhook-key-id`, also the signed event's `kid`). Pure: the signer is a
 * parameter.
 */
import type { Signer } from './receipt.ts';

const UTF8 = new TextEncoder();

/** The bytes a webhook signature covers. */
export function webhookSignedContent(id: string, timestamp: number, body: string): Uint8Array {
  return UTF8.encode(`${id}.${timestamp}.${body}`);
}

/**
 * The headers of one delivery attempt of `body` (the signed event's JSON text).
 * @example webhookHeaders('we-1', 1767225600, '{"a":1}', signer)['webhook-signature'] // 'v1a,…'
 */
export function webhookHeaders(
  id: string,
  timestamp: number,
  body: string,
  signer: Signer,
): Record<string, string> {
  const signature = signer.sign(webhookSignedContent(id, timestamp, body));
  if (signature.length !== 64) throw new RangeError('webhookHeaders: Ed25519 gives 64 bytes');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1a,${base64(signature)}`,
    'webhook-key-id': signer.kid,
  };
}

/** Standard base64 (RFC 4648 §4, padded), as Standard Webhooks writes signatures. */
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
