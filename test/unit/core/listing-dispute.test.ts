/**
 * `pickListing`: the listing a live check is held to, chosen from every listing of one normalized URL. The stores'
 * contract suite runs it through each backend; these cases pin the decision itself.
 */
import { describe, expect, it } from 'vitest';
import { pickListing } from '../../../core/listing-dispute.ts';
import type { Listing } from '../../../core/model.ts';

const WALLET = '0x1111111111111111111111111111111111111111';
const OTHER = '0x2222222222222222222222222222222222222222';

function listing(over: Partial<Listing>): Listing {
  return {
    url: 'https://seller.example/x',
    method: 'GET',
    priceUsd: 0.01,
    network: 'eip155:8453',
    asset: null,
    payTo: WALLET,
    source: 'a',
    ...over,
  };
}

describe('pickListing', () => {
  it('is null without listings', () => {
    expect(pickListing([], 'GET')).toBeNull();
  });

  it("prefers the method's own listing, else any, the first source by name", () => {
    const post = listing({ method: 'POST', source: 'a' });
    const getB = listing({ method: 'GET', source: 'b' });
    const getC = listing({ method: 'GET', source: 'c' });
    expect(pickListing([getC, post, getB], 'GET')).toBe(getB);
    expect(pickListing([getC, getB], 'POST')).toBe(getB);
  });

  it('is null when the listings disagree on wallet, network or price', () => {
    expect(pickListing([listing({}), listing({ source: 'b', payTo: OTHER })], 'GET')).toBeNull();
    expect(pickListing([listing({}), listing({ source: 'b', network: 'eip155:1' })], 'GET')).toBeNull();
    expect(pickListing([listing({}), listing({ source: 'b', priceUsd: 0.02 })], 'GET')).toBeNull();
  });

  it('lets first-party evidence set a contradicting third-party listing aside', () => {
    const own = { ...listing({ source: 'well-known' }), firstParty: true };
    expect(pickListing([own, listing({ source: 'a', payTo: OTHER })], 'GET')).toBe(own);
  });
});
