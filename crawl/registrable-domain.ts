/**
 * The unit of the crawl's per-domain limit (`crawl/scheduler.ts`): the registrable domain of a host, by the Public
 * Suffix List as the maintained `tldts` package ships it. Wildcard DNS gives one operator any number of names
 * (`a.seller.example`, `b.seller.example`, …), each a host of its own to the per-host limit; they share one
 * registrable domain (`seller.example`).
 *
 * The list's private section counts: `alice.vercel.app` and `bob.vercel.app` are two tenants of a platform, not one
 * operator, so each is its own domain (the prober's per-address limit, `io/probe/address-slots.ts`, still bounds what their
 * shared front end receives). A host with no registrable domain (an IP literal, a bare suffix) is its own unit.
 */
import { parse } from 'tldts';

/**
 * The registrable domain of a `host[:port]` (the crawl plan's `host`), lower-cased; the host itself (port kept) when
 * it has none.
 * @example registrableDomain('a.b.seller.example:8443') // 'seller.example'
 * @example registrableDomain('alice.vercel.app') // 'alice.vercel.app'
 * @example registrableDomain('127.0.0.1:4021') // '127.0.0.1:4021'
 */
export function registrableDomain(host: string): string {
  const name = host.startsWith('[') ? null : host.replace(/:\d*$/, '').replace(/\.$/, '').toLowerCase();
  if (name === null) return host.toLowerCase();
  const parsed = parse(name, { allowPrivateDomains: true, extractHostname: false });
  return parsed.isIp || parsed.domain === null ? host.toLowerCase() : parsed.domain;
}
