import { describe, expect, it } from 'vitest';
import { isPublicState, publicFormOf } from '../../../core/public-state.ts';

/** A live check receipt with no caller expectation: the URL's public state. */
const base = {
  type: 'check',
  mode: 'live',
  expected_source: null,
  claimed_price_usd: null,
  http_status: 402,
  access: { tier: 'free' },
};

describe('isPublicState', () => {
  it.each([
    ['a live check with no expectation', {}],
    ['a live check against the listing', { expected_source: 'listing' }],
    ['a paid live check', { access: { tier: 'paid' } }],
    ['a self-checked live check', { check_type: 'self-checked', access: { tier: 'exempt' } }],
    ['a live check that timed out', { http_status: null, verdict: 'recheck' }],
    ['a live check answered 404', { http_status: 404 }],
  ])('%s is public state', (_name, extra) => {
    expect(isPublicState({ ...base, ...extra })).toBe(true);
  });

  it.each([
    ['a dry run', { mode: 'dry-run' }],
    ['a dry run against the listing', { mode: 'dry-run', expected_source: 'listing' }],
    ['an expectation from the request', { expected_source: 'request' }],
    ['an unknown expectation source', { expected_source: 'crawl-v9' }],
    ['a claimed price', { claimed_price_usd: 0.01 }],
    ['a claimed price of zero', { claimed_price_usd: 0 }],
    ['an expiry check', { expiry_check: { checked: true } }],
    ['a free receipt that asked for the expiry check', { check_expiry: true }],
    ['a probe answered 405', { http_status: 405 }],
    ['a payment-status receipt', { type: 'payment-status' }],
    ['no mode', { mode: undefined }],
  ])('%s is not', (_name, extra) => {
    expect(isPublicState({ ...base, ...extra })).toBe(false);
  });
});

describe('the form of an endpoint whose receipts are its public state', () => {
  it('is the listed form when a listing names the URL, else exactly what is asked', () => {
    const asked = { url: 'https://a.example/x/', method: 'POST' } as const;
    expect(publicFormOf(null, asked)).toEqual(asked);
    expect(publicFormOf({ url: 'https://a.example/x', method: 'GET' }, asked)).toEqual({
      url: 'https://a.example/x',
      method: 'GET',
    });
  });
});
