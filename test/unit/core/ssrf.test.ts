import { describe, expect, it } from 'vitest';
import { checkAddress, checkTarget, checkUrl, literalAddress, parseCidrList } from '../../../core/ssrf.ts';
import { HOSTILE_ONLY, HOSTILE_URLS } from '../../fixtures/hostile-hosts.ts';

/** The pure gate as the prober applies it to a URL before any DNS. */
function gate(input: string, allow = parseCidrList('')) {
  return checkUrl(new URL(input), allow);
}

describe('checkUrl: hostile targets are refused before any DNS', () => {
  it.each(HOSTILE_ONLY)('%s is refused (%s)', (url, reason) => {
    expect(gate(url)).toEqual({ ok: false, reason });
  });

  it('holds enough attack cases to mean something', () => {
    expect(HOSTILE_ONLY.length).toBeGreaterThanOrEqual(45);
  });

  it.each(HOSTILE_URLS.filter(([, r]) => r === 'ok'))('near miss %s passes the URL gate (%s)', (url) => {
    expect(gate(url)).toEqual({ ok: true, address: null });
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
