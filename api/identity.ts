/**
 * Who is calling, for the free quota (docs/api.md §5.6): the canonical client address, taken from
 * `X-Forwarded-For` only when TRUST_PROXY is set and the peer is in TRUSTED_PROXIES. Counters are keyed by a keyed
 * hash, never the raw address, so the journal that makes them durable holds no addresses.
 */
import { createHmac } from 'node:crypto';
import { getRequestIP, type H3Event } from 'h3';
import { addressIn, canonicalAddress } from '../core/client-address.ts';
import type { Cidr } from '../core/ssrf.ts';

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

/** Whose `X-Forwarded-For` to believe: only with TRUST_PROXY, and only from a peer in TRUSTED_PROXIES. */
export type ProxyTrust = { trustProxy: boolean; trustedProxies: readonly Cidr[] };

/**
 * The caller's canonical address (core/client-address.ts): the socket peer, or, when that peer is a trusted proxy,
 * the last `X-Forwarded-For` entry, the one our proxy appended. Entries before it are whatever the client sent, so
 * taking the first would let anyone pick their quota identity; one appending proxy is assumed. An entry that does
 * not parse as an address counts as the peer. `unknown` when the transport gives no peer (`app.fetch` in-process).
 */
export function clientAddress(event: H3Event, proxy: ProxyTrust): string {
  const socket = getRequestIP(event);
  if (socket === undefined) return 'unknown';
  const peer = canonicalAddress(socket) ?? socket;
  if (proxy.trustProxy && addressIn(peer, proxy.trustedProxies)) {
    const forwarded = event.req.headers.get('x-forwarded-for')?.split(',').at(-1);
    const client = forwarded === undefined ? null : canonicalAddress(forwarded);
    if (client !== null) return client;
  }
  return peer;
}

/**
 * Gives an internal request (an MCP tool call dispatched to a route, `api/mcp/dispatch.ts`) the address of the
 * client it is made for, where {@link clientAddress} reads a transport's peer (`request.ip`). It is a property of
 * the in-process `Request` object, never a header: nothing a client sends over the wire can set it, so an outside
 * caller cannot choose the identity its quota is counted under.
 */
export function withClientAddress(request: Request, address: string): Request {
  Object.defineProperty(request, 'ip', { value: address, enumerable: false });
  return request;
}
