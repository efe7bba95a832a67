/**
 * What a request presents as its service key (docs/api.md §5.4, §5.5), read strictly so that no key can reach a free
 * answer by being sent a little wrong:
 * - `Authorization` must be exactly `Bearer <token>`: the scheme in any case (RFC 9110 §11.1: auth schemes are
 *   case-insensitive), one space, one token of visible ASCII, nothing after. Any other value (another scheme, a
 *   bare key, two spaces, a list such as `Bearer a, Bearer b`, trailing words, an empty value) is malformed.
 * - `x-service-key` is taken as sent; when both headers are present they must name the same key.
 * - A live key (`sck_live_`, in any case) in any other header is malformed: it was meant as a key.
 * The access gate answers malformed with a 401 `bad_key`, as it answers a key that is not exempt or active.
 */
import { SERVICE_KEY_PREFIX } from '../core/service-key.ts';

/** The key a request presents: none, one (still to be authenticated), or a malformed presentation (a 401). */
export type Credential =
  | { kind: 'none' }
  | { kind: 'key'; key: string }
  | { kind: 'malformed'; message: string };

const BEARER = /^bearer ([\x21-\x7e]+)$/i;
const LIVE_PREFIX = SERVICE_KEY_PREFIX.toLowerCase();
const KEY_HEADERS = new Set(['authorization', 'x-service-key']);

/** The token of an `Authorization: Bearer <token>` value, null when the value has any other shape. */
export function bearerToken(value: string): string | null {
  return BEARER.exec(value)?.[1] ?? null;
}

/**
 * Reads the credential of a request's headers.
 * @example readCredential(new Headers({ authorization: 'Token abc' })) // { kind: 'malformed', … }
 */
export function readCredential(headers: Headers): Credential {
  const authorization = headers.get('authorization');
  const bearer = authorization === null ? null : bearerToken(authorization);
  if (authorization !== null && bearer === null) {
    return {
      kind: 'malformed',
      message:
        'Send the service key as Authorization: Bearer <key> (one space, nothing after) or as x-service-key.',
    };
  }
  const header = headers.get('x-service-key');
  if (header !== null && bearer !== null && header !== bearer) {
    return { kind: 'malformed', message: 'Authorization and x-service-key name different keys; send one.' };
  }
  for (const [name, value] of headers) {
    if (!KEY_HEADERS.has(name) && value.toLowerCase().includes(LIVE_PREFIX)) {
      return {
        kind: 'malformed',
        message: `A service key goes in Authorization: Bearer <key> or x-service-key, never in ${name}.`,
      };
    }
  }
  const key = header ?? bearer;
  return key === null ? { kind: 'none' } : { kind: 'key', key };
}
