import { describe, expect, it } from 'vitest';
import {
  formatServiceKey,
  hashSecret,
  newServiceKey,
  parseServiceKey,
  sameHash,
} from '../../../core/service-key.ts';

/** Deterministic bytes: a counter, so the test is reproducible. */
function counter() {
  let next = 0;
  return (n: number) => Uint8Array.from({ length: n }, () => next++ % 256);
}

describe('service keys (sck_live_<id>_<secret>)', () => {
  it('formats and parses a new key', () => {
    const key = newServiceKey(counter());
    const text = formatServiceKey(key);
    expect(text).toMatch(/^sck_live_[a-z0-9]{12}_[A-Za-z0-9]{43}$/);
    expect(parseServiceKey(text)).toEqual(key);
  });

  it('draws distinct keys from distinct bytes and never a biased byte', () => {
    const random = counter();
    const keys = new Set(Array.from({ length: 50 }, () => formatServiceKey(newServiceKey(random))));
    expect(keys.size).toBe(50);
    // Bytes 252-255 are above the largest multiple of 36 (and 248-255 of 62): only 0xff bytes give no characters.
    const allHigh = () => (n: number) => new Uint8Array(n).fill(0xff);
    let calls = 0;
    const mostlyHigh = (n: number) => (calls++ < 3 ? allHigh()(n) : new Uint8Array(n).fill(1));
    expect(newServiceKey(mostlyHigh).id).toBe('bbbbbbbbbbbb');
  });

  it.each([
    '',
    'sck_live_',
    'sck_test_abcdefabcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'sck_live_ABCDEFabcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'sck_live_abcdefabcdef_AAAA',
    ' sck_live_abcdefabcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'test-exempt-secret-0123456789',
  ])('refuses %j', (text) => {
    expect(parseServiceKey(text)).toBeNull();
  });

  it('stores sha256 of the secret and compares hashes exactly', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const h = hashSecret('secret');
    expect(sameHash(h, hashSecret('secret'))).toBe(true);
    expect(sameHash(h, hashSecret('secreT'))).toBe(false);
    expect(sameHash(h, h.slice(0, -1))).toBe(false);
    expect(sameHash(h, `${h.slice(0, -1)}${h.endsWith('0') ? '1' : '0'}`)).toBe(false);
  });
});
