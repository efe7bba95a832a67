import { describe, expect, it } from 'vitest';
import { checkAddress, checkTarget, checkUrl, literalAddress, parseCidrList } from '../../../core/ssrf.ts';

/** The pure gate as the prober applies it to a URL before any DNS. */
function gate(input: string, allow = parseCidrList('')) {
  return checkUrl(new URL(input), allow);
}

describe('checkUrl: hostile targets are refused before any DNS', () => {
  const hostile: Array<[string, string]> = [
    ['http://169.254.169.254/latest/meta-data/', 'link_local'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'local_hostname'],
    ['http://[::1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://[::ffff:169.254.169.254]/', 'link_local'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'link_local'],
    ['http://[64:ff9b::127.0.0.1]/', 'loopback'],
    ['http://[64:ff9b::10.0.0.1]/', 'private'],
    ['http://[64:ff9b:1::808:808]/', 'nat64_local_use'],
    ['http://[2002:7f00:1::]/', 'loopback'],
    ['http://[2002:a9fe:a9fe::1]/', 'link_local'],
    ['http://[2002:c0a8:101::]/', 'private'],
    ['http://[::127.0.0.1]/', 'loopback'],
    ['http://[::8.8.8.8]/', 'ipv4_compatible'],
    ['http://[::ffff:0:127.0.0.1]/', 'loopback'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://127.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.0.0.1./', 'loopback'],
    ['http://127.255.255.254:8080/', 'loopback'],
    ['http://10.0.0.1/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://100.64.0.1/', 'shared_cgnat'],
    ['http://100.127.255.255/', 'shared_cgnat'],
    ['http://0.1.2.3/', 'this_network'],
    ['http://[fe80::1]/', 'link_local'],
    ['http://[febf::1]/', 'link_local'],
    ['http://[fec0::1]/', 'site_local'],
    ['http://[fc00::1]/', 'unique_local'],
    ['http://[fd12:3456::1]/', 'unique_local'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://[100::1]/', 'discard'],
    ['http://[2001::1]/', 'teredo'],
    ['http://[2001:db8::1]/', 'documentation'],
    ['http://[2001:10::1]/', 'orchid'],
    ['http://[2001:20::1]/', 'orchid_v2'],
    ['http://[2001:2::1]/', 'benchmarking'],
    ['http://[3fff::1]/', 'documentation'],
    ['http://[4000::1]/', 'not_global_unicast'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://239.255.255.250/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://240.0.0.1/', 'reserved'],
    ['http://192.0.2.1/', 'documentation'],
    ['http://198.51.100.7/', 'documentation'],
    ['http://203.0.113.9/', 'documentation'],
    ['http://198.18.0.1/', 'benchmarking'],
    ['http://198.19.255.255/', 'benchmarking'],
    ['http://192.0.0.8/', 'ietf_protocol'],
    ['http://192.88.99.1/', '6to4_relay'],
    ['http://localhost/', 'local_hostname'],
    ['http://LOCALHOST./', 'local_hostname'],
    ['http://foo.localhost/', 'local_hostname'],
    ['http://printer.local/', 'local_hostname'],
    ['http://box.localdomain/', 'local_hostname'],
    ['http://router.home.arpa/', 'local_hostname'],
    ['http://db/', 'single_label_hostname'],
    ['http://intranet:8080/', 'single_label_hostname'],
    ['http://a..example.com/', 'bad_hostname'],
    ['http://user:pass@example.com/', 'userinfo_not_allowed'],
    ['http://user@example.com/', 'userinfo_not_allowed'],
    ['file:///etc/passwd', 'scheme_not_allowed'],
    ['gopher://x.example/_SLAVEOF', 'scheme_not_allowed'],
    ['ftp://x.example/', 'scheme_not_allowed'],
    ['ws://x.example/', 'scheme_not_allowed'],
    ['data:text/plain,hi', 'scheme_not_allowed'],
    ['http://example.com:0/', 'port_not_allowed'],
    ['http://example.com:25/', 'port_not_allowed'],
    ['http://example.com:22/', 'port_not_allowed'],
    ['https://example.com:6379/', 'ok'],
  ];

  it.each(hostile.filter(([, r]) => r !== 'ok'))('%s is refused (%s)', (url, reason) => {
    expect(gate(url)).toEqual({ ok: false, reason });
  });

  it('holds enough attack cases to mean something', () => {
    expect(hostile.length).toBeGreaterThanOrEqual(45);
  });
});

describe('checkUrl: public targets pass', () => {
  it.each([
    ['https://1.1.1.1/', '1.1.1.1'],
    ['http://8.8.8.8:8080/x', '8.8.8.8'],
    ['https://[2606:4700::1111]/', '2606:4700::1111'],
    ['https://[::ffff:8.8.8.8]/', '::ffff:808:808'],
    ['https://[64:ff9b::8.8.8.8]/', '64:ff9b::808:808'],
    ['https://[2002:808:808::1]/', '2002:808:808::1'],
    ['http://172.32.0.1/', '172.32.0.1'],
    ['http://100.128.0.1/', '100.128.0.1'],
  ])('%s passes with its literal checked', (url, address) => {
    expect(gate(url)).toEqual({ ok: true, address });
  });

  it.each([
    'https://api.example.com/v1/x',
    'https://example.com.:8443/',
    'http://xn--bcher-kva.example/',
    'https://seller.io:6379/',
  ])('%s passes and must be resolved', (url) => {
    expect(gate(url)).toEqual({ ok: true, address: null });
  });
});

describe('checkAddress', () => {
  it.each(['1.1.1.1', '8.8.8.8', '2606:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:1.1.1.1'])(
    '%s is public',
    (ip) => {
      expect(checkAddress(ip, [])).toEqual({ ok: true });
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:A9FE:A9FE', 'link_local'],
    ['[::1]', 'loopback'],
    ['fe80::1%eth0', 'unparseable_address'],
    ['127.000.000.001', 'unparseable_address'],
    ['010.0.0.1', 'unparseable_address'],
    ['256.0.0.1', 'unparseable_address'],
    ['1.2.3', 'unparseable_address'],
    ['1:2:3:4:5:6:7:8:9', 'unparseable_address'],
    ['1::2::3', 'unparseable_address'],
    ['12345::1', 'unparseable_address'],
    [':1::', 'unparseable_address'],
    ['::ffff:1.2.3.256', 'unparseable_address'],
    ['', 'unparseable_address'],
    ['example.com', 'unparseable_address'],
  ])('%s is refused (%s)', (ip, reason) => {
    expect(checkAddress(ip, [])).toEqual({ ok: false, reason });
  });

  it('lets an allow-listed block through, and only that block', () => {
    const allow = parseCidrList('127.0.0.1/32');
    expect(checkAddress('127.0.0.1', allow)).toEqual({ ok: true });
    expect(checkAddress('::ffff:127.0.0.1', allow)).toEqual({ ok: true });
    expect(checkAddress('127.0.0.2', allow)).toEqual({ ok: false, reason: 'loopback' });
    expect(checkAddress('::1', allow)).toEqual({ ok: false, reason: 'loopback' });
    expect(checkAddress('10.0.0.1', allow)).toEqual({ ok: false, reason: 'private' });
    // A 6to4 address routes to a relay, not to the embedded host: the IPv4 allow entry does not cover it.
    expect(checkAddress('2002:7f00:1::', allow)).toEqual({ ok: false, reason: 'loopback' });
  });

  it('applies an IPv6 allow block', () => {
    const allow = parseCidrList('fd00::/8');
    expect(checkAddress('fd00::5', allow)).toEqual({ ok: true });
    expect(checkAddress('fc00::5', allow)).toEqual({ ok: false, reason: 'unique_local' });
  });

  it('works through checkUrl too', () => {
    const allow = parseCidrList('127.0.0.0/8');
    expect(gate('http://127.0.0.2:1234/', allow)).toEqual({ ok: true, address: '127.0.0.2' });
    expect(gate('http://localhost:1234/', allow)).toEqual({ ok: false, reason: 'local_hostname' });
  });
});

describe('parseCidrList', () => {
  it('parses IPv4, IPv6 and bare addresses, clearing host bits', () => {
    const list = parseCidrList(' 10.1.2.3/8 ,::1, 2001:db8::/32,');
    expect(list.map((c) => [c.family, c.prefix, [...c.bytes].slice(0, 4)])).toEqual([
      [4, 8, [10, 0, 0, 0]],
      [6, 128, [0, 0, 0, 0]],
      [6, 32, [0x20, 0x01, 0x0d, 0xb8]],
    ]);
  });

  it('returns nothing for an empty setting', () => {
    expect(parseCidrList('')).toEqual([]);
    expect(parseCidrList(' , ')).toEqual([]);
  });

  it.each([
    'banana',
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/',
    '10.0.0.0/-1',
    '10.0.0/8',
    'localhost/8',
    '1.2.3.4/8/9',
  ])('throws on %s', (text) => {
    expect(() => parseCidrList(text)).toThrow(TypeError);
  });
});

describe('checkTarget and literalAddress', () => {
  it('accepts ordinary public names on any non-blocked port', () => {
    expect(checkTarget(new URL('https://api.example.com:8443/x'))).toEqual({ ok: true });
    expect(checkTarget(new URL('http://api.example.com/'))).toEqual({ ok: true });
  });

  it('sees IP literals, bracketed or not', () => {
    expect(literalAddress(new URL('http://[::1]:80/'))).toBe('::1');
    expect(literalAddress(new URL('http://0x7f.1/'))).toBe('127.0.0.1');
    expect(literalAddress(new URL('http://example.com/'))).toBeNull();
  });
});
