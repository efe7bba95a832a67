/**
 * Client addresses for the free quota (docs/api.md §5.6, docs/decisions.md "Access and quotas"):
 * one canonical text per address, so `10.0.0.1:1000` and `[::ffff:10.0.0.1]` are the same client as `10.0.0.1`,
 * and the networks an address belongs to, so rotating nearby addresses meets a ceiling. Parsing is the SSRF
 * gate's (`core/ssrf.ts`): one parser for every address the service reads.
 */
import { type Cidr, type Ip, inCidr, parseIp } from './ssrf.ts';

/** The networks of one client address that carry a free-tier ceiling. */
export type ClientNetworks = {
  /** IPv4 /24 or IPv6 /64 (the unparseable: the text itself). */
  network: string;
  /** IPv6 /48, what one holder is commonly assigned (RFC 6177); null for IPv4 and the unparseable. */
  site: string | null;
};

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/**
 * The canonical text of an address as a socket or a proxy writes it: a port, brackets and IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`, in any spelling) are folded away; IPv6 comes out in RFC 5952 form (lower case, `::` for the
 * longest run of zero groups). Null for anything else: names, zone ids, `unknown`, obfuscated RFC 7239 ids.
 *
 * @example canonicalAddress('[2001:DB8:0:0::1]:443') // '2001:db8::1'
 * @example canonicalAddress('::ffff:10.0.0.1') // '10.0.0.1'
 */
export function canonicalAddress(text: string): string | null {
  const ip = parseClientIp(text.trim());
  return ip === null ? null : formatIp(ip);
}

/**
 * True when a canonical address lies in one of `blocks` (the trusted proxies).
 *
 * @example addressIn('127.0.0.1', parseCidrList('127.0.0.1/8,::1')) // true
 */
export function addressIn(address: string, blocks: readonly Cidr[]): boolean {
  const ip = parseIp(address);
  return ip !== null && blocks.some((block) => inCidr(ip, block));
}

/**
 * The networks of a canonical address: IPv4 /24 (`198.51.100.0/24`), IPv6 /64 (`2001:db8:0:1::/64`) and /48
 * (`2001:db8:0::/48`). Text that is no address is its own network.
 */
export function clientNetworks(address: string): ClientNetworks {
  const ip = parseIp(address);
  if (ip === null) return { network: address, site: null };
  if (ip.family === 4) return { network: `${ip.bytes.slice(0, 3).join('.')}.0/24`, site: null };
  const groups = groupsOf(ip.bytes).map((g) => g.toString(16));
  return { network: `${groups.slice(0, 4).join(':')}::/64`, site: `${groups.slice(0, 3).join(':')}::/48` };
}

/** Bare address, `a.b.c.d:port`, `[v6]` or `[v6]:port`; a bare IPv6 address carries no port. */
function parseClientIp(text: string): Ip | null {
  let host = text;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1 || !/^(?::\d{1,5})?$/.test(text.slice(close + 1))) return null;
    host = text.slice(1, close);
    if (!host.includes(':')) return null;
  } else if (/^[\d.]+:\d{1,5}$/.test(text)) {
    host = text.slice(0, text.indexOf(':'));
  }
  const ip = parseIp(host);
  if (ip === null || ip.family === 4) return ip;
  const mapped = MAPPED_PREFIX.every((byte, i) => ip.bytes[i] === byte);
  return mapped ? { family: 4, bytes: ip.bytes.slice(12) } : ip;
}

function formatIp(ip: Ip): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const groups = groupsOf(ip.bytes);
  // RFC 5952 §4.2: the longest run of two or more zero groups (the first when tied) becomes `::`.
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let end = i;
    while (end < 8 && groups[end] === 0) end++;
    if (end - i > best.length) best = { at: i, length: end - i };
    i = end === i ? i + 1 : end;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at === -1) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.length).join(':')}`;
}

function groupsOf(bytes: Uint8Array): number[] {
  return Array.from({ length: 8 }, (_, i) => (bytes[i * 2]! << 8) | bytes[i * 2 + 1]!);
}
