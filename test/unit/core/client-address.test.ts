import { describe, expect, it } from 'vitest';
import { addressIn, canonicalAddress, clientNetworks } from '../../../core/client-address.ts';
import { parseCidrList } from '../../../core/ssrf.ts';

describe('canonicalAddress', () => {
  it.each([
    ['198.51.100.7', '198.51.100.7'],
    [' 198.51.100.7 ', '198.51.100.7'],
    ['198.51.100.7:1000', '198.51.100.7'],
    ['198.51.100.7:65535', '198.51.100.7'],
    ['::ffff:198.51.100.7', '198.51.100.7'],
    ['::FFFF:c633:6407', '198.51.100.7'],
    ['0:0:0:0:0:ffff:198.51.100.7', '198.51.100.7'],
    ['[::ffff:198.51.100.7]:8080', '198.51.100.7'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8::0:1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:0db8::0001]:443', '2001:db8::1'],
    ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2:3:4:5:6'],
    ['2001:db8:0:2:3:4:5:6', '2001:db8:0:2:3:4:5:6'],
    ['::1', '::1'],
    ['::', '::'],
    ['fe80:0:0:0:0:0:0:0', 'fe80::'],
  ])('%s is %s', (text, canonical) => {
    expect(canonicalAddress(text)).toBe(canonical);
  });

  it.each([
    '',
    'unknown',
    '_hidden',
    'proxy.example',
    '198.51.100.7:',
    '198.51.100.7:123456',
    '198.51.100.007',
    '198.51.100',
    '2001:db8::1::2',
    '[2001:db8::1',
    '[2001:db8::1]x',
    '[198.51.100.7]',
    'fe80::1%eth0',
    '1.2.3.4, 5.6.7.8',
  ])('%j is no address', (text) => {
    expect(canonicalAddress(text)).toBeNull();
  });
});

describe('clientNetworks', () => {
  it('puts IPv4 in its /24, with no wider block', () => {
    expect(clientNetworks('198.51.100.7')).toEqual({ network: '198.51.100.0/24', site: null });
  });

  it('puts IPv6 in its /64 and its /48', () => {
    expect(clientNetworks('2001:db8:a:b:1:2:3:4')).toEqual({
      network: '2001:db8:a:b::/64',
      site: '2001:db8:a::/48',
    });
    expect(clientNetworks('2001:db8::1')).toEqual({ network: '2001:db8:0:0::/64', site: '2001:db8:0::/48' });
  });

  it('keeps text that is no address as its own network', () => {
    expect(clientNetworks('unknown')).toEqual({ network: 'unknown', site: null });
  });
});

describe('addressIn', () => {
  const proxies = parseCidrList('127.0.0.1/8,::1,10.20.0.0/16');
  it.each([
    ['127.0.0.1', true],
    ['127.9.9.9', true],
    ['::1', true],
    ['10.20.3.4', true],
    ['10.21.3.4', false],
    ['198.51.100.7', false],
    ['::2', false],
    ['unknown', false],
  ])('%s in the trusted blocks: %s', (address, inside) => {
    expect(addressIn(address, proxies)).toBe(inside);
  });
});
