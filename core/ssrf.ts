/**
 * The address rules of the SSRF gate (CONTRIBUTING.md "SSRF gate", docs/api.md §2.10 "gated against server-side request
 * forgery"). Pure: IP parsing is done here, by hand, so that core/ needs no `node:net`.
 *
 * Policy, in one place:
 * - Only `http:`/`https:`; userinfo is refused (it would be sent to the target and never belongs in a probe).
 * - Ports: any port 1-65535 except the Fetch standard's "bad ports" (SMTP, SSH, IRC, ...). Browsers refuse those
 *   to stop cross-protocol attacks; a public address is public, so nothing else is refused by port.
 * - Names that only make sense inside a network are refused before any DNS (`localhost`, `*.localhost`,
 *   `*.local`, `*.localdomain`, `*.internal`, `*.arpa`, `*.invalid`), and so are single-label names, which a
 *   resolver may complete with a private search domain.
 * - Every resolved address must be public; IPv6 must be global unicast (2000::/3) outside the special-purpose
 *   blocks, except IPv4-mapped and NAT64 forms, whose embedded IPv4 is judged by the IPv4 rules (as is 6to4).
 *   Anything that does not parse is refused (fail closed).
 */

/** A parsed CIDR block: network bytes (4 or 16) with the host bits cleared, and the prefix length. */
export type Cidr = { family: 4 | 6; bytes: Uint8Array; prefix: number };

/** Outcome of one gate rule: pass, or a snake_case reason for refusing. */
export type GateResult = { ok: true } | { ok: false; reason: string };

/** Outcome of {@link checkUrl}: refused, or passed with the already-checked IP literal (null: resolve the name). */
export type UrlGateResult = { ok: true; address: string | null } | { ok: false; reason: string };

// Fetch standard §2.9 "port blocking" (whatwg/fetch, including 4190 and 6679 added in 2024).
const BAD_PORTS = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

// Special-use names (RFC 6761, RFC 6762, RFC 8375 `home.arpa`, ICANN's reserved `.internal`).
const LOCAL_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'arpa', 'invalid'];

/**
 * Parses an operator's comma-separated list of IPv4/IPv6 CIDRs (`PROBE_ALLOW_CIDRS`). A bare address means a
 * single host. Throws `TypeError` on anything else: a typo in a security setting must stop the start-up.
 *
 * @example parseCidrList('127.0.0.0/8, ::1/128') // two blocks
 */
export function parseCidrList(text: string): Cidr[] {
  const out: Cidr[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const cidr = parseCidr(entry);
    if (cidr === null) throw new TypeError(`[ssrf] not an IPv4/IPv6 CIDR: ${JSON.stringify(entry)}`);
    out.push(cidr);
  }
  return out;
}

/**
 * Checks a target URL before any DNS: scheme, userinfo, port and special-use host names. IP-literal hosts pass
 * here and are judged by {@link checkAddress}. The URL must come from the WHATWG parser, which has already
 * rewritten `0x7f.1`, `2130706433` or `0177.0.0.1` as a dotted quad.
 *
 * @example checkTarget(new URL('http://localhost/')) // { ok: false, reason: 'local_hostname' }
 */
export function checkTarget(url: URL): GateResult {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse('scheme_not_allowed');
  if (url.username !== '' || url.password !== '') return refuse('userinfo_not_allowed');
  if (url.port !== '' && BAD_PORTS.has(Number(url.port))) return refuse('port_not_allowed');
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === '') return refuse('empty_host');
  if (literalAddress(url) !== null) return { ok: true };
  const labels = host.split('.');
  if (labels.some((label) => label === '')) return refuse('bad_hostname');
  if (LOCAL_SUFFIXES.includes(labels[labels.length - 1]!)) return refuse('local_hostname');
  if (labels.length < 2) return refuse('single_label_hostname');
  return { ok: true };
}

/**
 * The IP literal of a URL's host without brackets (`[::1]` → `::1`), or null when the host is a name.
 *
 * @example literalAddress(new URL('http://[::1]:8080/')) // '::1'
 */
export function literalAddress(url: URL): string | null {
  const host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  return parseIPv4(host) === null ? null : host;
}

/**
 * Checks one address against the public-address rules; an `allow` block lets a listed address through
 * (operator config, for loopback tests and the demo). Unparseable input is refused.
 *
 * @example checkAddress('::ffff:127.0.0.1', []) // { ok: false, reason: 'loopback' }
 */
export function checkAddress(ip: string, allow: readonly Cidr[]): GateResult {
  const parsed = parseIp(ip);
  if (parsed === null) return refuse('unparseable_address');
  if (allow.some((c) => inCidr(parsed, c))) return { ok: true };
  if (parsed.family === 4) return verdict(ipv4Reason(parsed.bytes));
  const b = parsed.bytes;
  // An IPv4-mapped address *is* its IPv4 address to a dual-stack socket, so the allow list applies to it too.
  if (inCidr(parsed, MAPPED)) {
    const v4 = { family: 4 as const, bytes: b.slice(12) };
    if (allow.some((c) => inCidr(v4, c))) return { ok: true };
    return verdict(ipv4Reason(v4.bytes));
  }
  return verdict(ipv6Reason(b));
}

/**
 * The whole pure gate for one URL: {@link checkTarget}, then {@link checkAddress} for an IP-literal host. On
 * success `address` is the checked literal, or null when the host is a name the caller must resolve and check.
 *
 * @example checkUrl(new URL('http://0x7f.1/'), []) // { ok: false, reason: 'loopback' }
 */
export function checkUrl(url: URL, allow: readonly Cidr[]): UrlGateResult {
  const target = checkTarget(url);
  if (!target.ok) return target;
  const address = literalAddress(url);
  if (address === null) return { ok: true, address: null };
  const checked = checkAddress(address, allow);
  return checked.ok ? { ok: true, address } : checked;
}

/** A parsed IP address: 4 or 16 network-order bytes. */
export type Ip = { family: 4 | 6; bytes: Uint8Array };

const V4_RULES: ReadonlyArray<readonly [Cidr, string]> = [
  [cidr('0.0.0.0/32'), 'unspecified'],
  [cidr('0.0.0.0/8'), 'this_network'],
  [cidr('10.0.0.0/8'), 'private'],
  [cidr('100.64.0.0/10'), 'shared_cgnat'],
  [cidr('127.0.0.0/8'), 'loopback'],
  [cidr('169.254.0.0/16'), 'link_local'],
  [cidr('172.16.0.0/12'), 'private'],
  [cidr('192.0.0.0/24'), 'ietf_protocol'],
  [cidr('192.0.2.0/24'), 'documentation'],
  [cidr('192.88.99.0/24'), '6to4_relay'],
  [cidr('192.168.0.0/16'), 'private'],
  [cidr('198.18.0.0/15'), 'benchmarking'],
  [cidr('198.51.100.0/24'), 'documentation'],
  [cidr('203.0.113.0/24'), 'documentation'],
  [cidr('224.0.0.0/4'), 'multicast'],
  [cidr('255.255.255.255/32'), 'broadcast'],
  [cidr('240.0.0.0/4'), 'reserved'],
];

const MAPPED = cidr('::ffff:0:0/96');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');
const GLOBAL_UNICAST = cidr('2000::/3');

// Tried in order; the first match names the reason. Teredo is refused outright: the server address it embeds
// is obfuscated and the relay path is not ours to judge.
const V6_RULES: ReadonlyArray<readonly [Cidr, string]> = [
  [cidr('::/128'), 'unspecified'],
  [cidr('::1/128'), 'loopback'],
  [cidr('::ffff:0:0:0/96'), 'ipv4_translated'],
  [cidr('::/96'), 'ipv4_compatible'],
  [cidr('64:ff9b:1::/48'), 'nat64_local_use'],
  [cidr('100::/64'), 'discard'],
  [cidr('2001::/32'), 'teredo'],
  [cidr('2001:2::/48'), 'benchmarking'],
  [cidr('2001:10::/28'), 'orchid'],
  [cidr('2001:20::/28'), 'orchid_v2'],
  [cidr('2001:db8::/32'), 'documentation'],
  [cidr('2001::/23'), 'ietf_protocol'],
  [cidr('3fff::/20'), 'documentation'],
  [cidr('fc00::/7'), 'unique_local'],
  [cidr('fe80::/10'), 'link_local'],
  [cidr('fec0::/10'), 'site_local'],
  [cidr('ff00::/8'), 'multicast'],
];

function ipv4Reason(bytes: Uint8Array): string | null {
  const ip: Ip = { family: 4, bytes };
  for (const [block, reason] of V4_RULES) if (inCidr(ip, block)) return reason;
  return null;
}

function ipv6Reason(bytes: Uint8Array): string | null {
  const ip: Ip = { family: 6, bytes };
  for (const [block, reason] of V6_RULES) {
    if (!inCidr(ip, block)) continue;
    // Deprecated forms never reach the internet, but `::127.0.0.1` should still read `loopback`.
    if (reason === 'ipv4_translated' || reason === 'ipv4_compatible')
      return ipv4Reason(bytes.slice(12)) ?? reason;
    return reason;
  }
  // RFC 6052 well-known NAT64 prefix: the IPv4 sits in the last 32 bits.
  if (inCidr(ip, NAT64)) return ipv4Reason(bytes.slice(12));
  // RFC 3056 6to4: the IPv4 sits in bits 16-48.
  if (inCidr(ip, SIX_TO_FOUR)) return ipv4Reason(bytes.slice(2, 6));
  if (!inCidr(ip, GLOBAL_UNICAST)) return 'not_global_unicast';
  return null;
}

function verdict(reason: string | null): GateResult {
  return reason === null ? { ok: true } : refuse(reason);
}

function refuse(reason: string): GateResult & { ok: false } {
  return { ok: false, reason };
}

/** True when `ip` lies in `block` (same family, the first `prefix` bits equal). */
export function inCidr(ip: Ip, block: Cidr): boolean {
  if (ip.family !== block.family) return false;
  let bits = block.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((ip.bytes[i]! ^ block.bytes[i]!) & mask) !== 0) return false;
  }
  return true;
}

/** Module constants only: a bad literal here is a bug, so it throws. */
function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (parsed === null) throw new TypeError(`[ssrf] bad built-in CIDR ${text}`);
  return parsed;
}

function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  const ip = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (ip === null) return null;
  const max = ip.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) return null;
    prefix = Number(p);
  }
  // Host bits below the prefix are cleared, so `10.1.2.3/8` means 10.0.0.0/8.
  const bytes = ip.bytes.slice();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return { family: ip.family, bytes, prefix };
}

/**
 * Parses an IPv4 dotted quad or an IPv6 text form (RFC 4291 §2.2, optionally in brackets); null for anything else,
 * zone ids and leading-zero IPv4 parts included.
 */
export function parseIp(text: string): Ip | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (bare.includes(':')) {
    const bytes = parseIPv6(bare);
    return bytes === null ? null : { family: 6, bytes };
  }
  const bytes = parseIPv4(bare);
  return bytes === null ? null : { family: 4, bytes };
}

/** Strict dotted quad. Leading zeros are refused: `010` is octal to some parsers and decimal to others. */
function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

/** RFC 4291 §2.2 text forms: full, `::`-compressed, and a trailing dotted quad. Zone ids are refused. */
function parseIPv6(text: string): Uint8Array | null {
  if (text.length > 45) return null;
  let head = text;
  let v4: Uint8Array | null = null;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === null) return null;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  if (left === null || right === null) return null;
  const count = left.length + right.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return null;
  const all = [...left, ...new Array<number>(8 - count).fill(0), ...right];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (v4 !== null) out.set(v4, 12);
  return out;
}

function groups(text: string): number[] | null {
  if (text === '') return [];
  const out: number[] = [];
  for (const g of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    out.push(Number.parseInt(g, 16));
  }
  return out;
}
