import { describe, expect, it } from 'vitest';
import { checkExpiry, optionExpired, optionExpiry } from '../../../core/expiry.ts';
import type { Accept } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';

const WALLET = '0x1111111111111111111111111111111111111111';
const probedAt = new Date('2026-03-01T12:00:00.000Z');
const at = (offsetS: number) => new Date(probedAt.getTime() + offsetS * 1000);
const unix = (offsetS: number) => Math.floor(at(offsetS).getTime() / 1000);

function accept(overrides: Partial<Accept> = {}): Accept {
  return {
    scheme: 'exact',
    network: BASE,
    amount: '10000',
    asset: BASE_USDC,
    payTo: WALLET,
    maxTimeoutSeconds: null,
    validBefore: null,
    extra: null,
    ...overrides,
  };
}

describe('optionExpiry', () => {
  it('prefers validBefore, then maxTimeoutSeconds, then 60 s', () => {
    expect(optionExpiry(accept({ validBefore: unix(120), maxTimeoutSeconds: 300 }), probedAt)).toEqual({
      at: at(120),
      source: 'validBefore',
    });
    expect(optionExpiry(accept({ maxTimeoutSeconds: 300 }), probedAt)).toEqual({
      at: at(300),
      source: 'maxTimeoutSeconds',
    });
    expect(optionExpiry(accept(), probedAt)).toEqual({ at: at(60), source: 'default_60s' });
  });

  it('yields an invalid date for an out-of-range validBefore', () => {
    expect(Number.isNaN(optionExpiry(accept({ validBefore: 1e20 }), probedAt).at.getTime())).toBe(true);
  });
});

describe('checkExpiry', () => {
  const now = at(5);

  it('is not expired when a Base USDC option outlives now + skew', () => {
    const check = checkExpiry([accept({ maxTimeoutSeconds: 300 })], probedAt, 30, now);
    expect(check).toEqual({
      checked_at: now.toISOString(),
      skew_s: 30,
      options_considered: 1,
      latest_expiry: at(300).toISOString(),
      expiry_source: 'maxTimeoutSeconds',
      expired: false,
    });
  });

  it('is expired when the expiry falls exactly at now + skew (boundary)', () => {
    expect(checkExpiry([accept({ validBefore: unix(35) })], probedAt, 30, now).expired).toBe(true);
    expect(checkExpiry([accept({ validBefore: unix(36) })], probedAt, 30, now).expired).toBe(false);
  });

  it('is expired only when every Base USDC option is', () => {
    const options = [accept({ validBefore: unix(10) }), accept({ maxTimeoutSeconds: 600 })];
    const check = checkExpiry(options, probedAt, 30, now);
    expect(check.expired).toBe(false);
    expect(check.latest_expiry).toBe(at(600).toISOString());
    expect(checkExpiry(options, probedAt, 30, at(700)).expired).toBe(true);
  });

  it('ignores options that are not Base USDC', () => {
    const options = [
      accept({ network: 'eip155:137', maxTimeoutSeconds: 3600 }),
      accept({ asset: '0x2222222222222222222222222222222222222222', maxTimeoutSeconds: 3600 }),
      accept({ validBefore: unix(10) }),
    ];
    const check = checkExpiry(options, probedAt, 30, now);
    expect(check.options_considered).toBe(1);
    expect(check.expired).toBe(true);
  });

  it('judges nothing without a Base USDC option', () => {
    const check = checkExpiry([accept({ network: 'eip155:137' })], probedAt, 30, now);
    expect(check).toMatchObject({
      options_considered: 0,
      latest_expiry: null,
      expiry_source: null,
      expired: false,
    });
  });

  it('fails closed on invalid dates, skew or clock', () => {
    expect(checkExpiry([accept({ validBefore: 1e20 })], probedAt, 30, now)).toMatchObject({
      expired: true,
      latest_expiry: null,
    });
    expect(checkExpiry([accept({ validBefore: Number.NaN })], probedAt, 30, now).expired).toBe(true);
    expect(checkExpiry([accept()], new Date('garbage'), 30, now).expired).toBe(true);
    expect(checkExpiry([accept({ maxTimeoutSeconds: 300 })], probedAt, Number.NaN, now).expired).toBe(true);
    expect(checkExpiry([accept({ maxTimeoutSeconds: 300 })], probedAt, -1, now).expired).toBe(true);
    expect(
      checkExpiry([accept({ maxTimeoutSeconds: 300 })], probedAt, 30, new Date(Number.NaN)).expired,
    ).toBe(true);
  });
});

describe('optionExpired', () => {
  it('judges one option at the boundary and fails closed', () => {
    expect(optionExpired(accept({ validBefore: unix(35) }), probedAt, 30, at(5))).toBe(true);
    expect(optionExpired(accept({ validBefore: unix(36) }), probedAt, 30, at(5))).toBe(false);
    expect(optionExpired(accept({ validBefore: 1e20 }), probedAt, 30, at(5))).toBe(true);
  });
});
