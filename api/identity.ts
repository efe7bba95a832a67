/**
 * Who is calling, for the free quota (design.md "Free quota identity"): the client address, taken from
 * `X-Forwarded-For` only when TRUST_PROXY is set. Counters are keyed by a keyed hash, never the raw address, so
 * the journal that makes them durable holds no addresses.
 */
import { createHmac } from 'node:crypto';
import { getRequestIP, type H3Event } from 'h3';

export type Identity = {
  /** Opaque, stable id of a value (an address, a ref, a client name) for quota keys. */
  hash(kind: string, value: string): string;
};

/** Creates the identity hasher with the installation's secret salt. */
export function createIdentity(salt: Uint8Array): Identity {
  return {
    hash(kind, value) {
      return `${kind}:${createHmac('sha256', salt).update(`${kind}\u0000${value}`).digest('base64url').slice(0, 22)}`;
    },
  };
}

/**
 * The caller's address; `unknown` when the transport gives none (requests made through `app.fetch`). With
 * TRUST_PROXY, the last `X-Forwarded-For` entry: the one our own proxy appended. Entries before it are whatever the
 * client sent, so taking the first would let anyone pick their quota identity. One appending proxy is assumed.
 */
export function clientAddress(event: H3Event, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = event.req.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  return getRequestIP(event) ?? 'unknown';
}

/**
 * The client's network: an IPv4 /24 or an IPv6 /64, so one person cannot multiply the free tier by rotating
 * nearby addresses (design.md). Anything unparseable is its own network.
 */
export function clientNetwork(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped?.[1] ?? address;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\d{1,3}$/.exec(ip);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0/24`;
  if (ip.includes(':')) return `${expandIpv6(ip).slice(0, 4).join(':')}::/64`;
  return ip;
}

function expandIpv6(ip: string): string[] {
  const [head = '', tail] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...fill, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}
