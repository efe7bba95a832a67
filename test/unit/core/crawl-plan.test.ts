import { describe, expect, it } from 'vitest';
import { planCrawl } from '../../../core/crawl-plan.ts';
import type { SourceListing } from '../../../core/source-listing.ts';
import { normalizeUrl } from '../../../core/url.ts';

function listing(url: string, source: string, more: Partial<SourceListing> = {}): SourceListing {
  return {
    url,
    urlNorm: normalizeUrl(url),
    method: 'GET',
    priceUsd: null,
    network: null,
    asset: null,
    payTo: null,
    source,
    example: null,
    ...more,
  };
}

describe('planCrawl', () => {
  it('dedupes by the normalized URL and holds each endpoint to the first source by name', () => {
    const plan = planCrawl(
      [
        listing('https://A.example:443/x/?b=1&a=2', 'payai', {
          payTo: '0xc',
          example: { query: { a: '1' }, body: null },
        }),
        listing('https://a.example/x?a=2&b=1#frag', 'cdp', { payTo: '0xc', method: 'POST' }),
        listing('https://b.example:8080/y', 'payai'),
        listing('https://a.example/x?a=2&b=1', 'payai'),
      ],
      null,
    );
    expect(plan.endpoints).toHaveLength(2);
    const [a, b] = plan.endpoints;
    expect(a).toMatchObject({
      urlNorm: 'https://a.example/x?a=2&b=1',
      url: 'https://a.example/x?a=2&b=1#frag',
      host: 'a.example',
      method: 'POST',
      sourceList: 'cdp',
      alsoListedIn: ['payai'],
      listing: { payTo: '0xc', source: 'cdp' },
      example: { query: { a: '1' }, body: null },
    });
    expect(a?.listing).not.toHaveProperty('example');
    expect(b).toMatchObject({ host: 'b.example:8080', sourceList: 'payai', alsoListedIn: [] });
    expect(plan.lists).toEqual({ cdp: 1, payai: 1 });
    expect(plan.listedIn).toEqual({ cdp: 1, payai: 2 });
  });

  it('keeps the first endpoints only under a limit', () => {
    const plan = planCrawl([listing('https://a.example/1', 's'), listing('https://a.example/2', 's')], 1);
    expect(plan.endpoints.map((e) => e.urlNorm)).toEqual(['https://a.example/1']);
    expect(plan.lists).toEqual({ s: 1 });
  });

  describe('disputed listings', () => {
    const VICTIM = 'https://victim.example/weather';
    const REAL = '0x1111111111111111111111111111111111111111';
    const ATTACKER = '0x9999999999999999999999999999999999999999';
    const terms = (payTo: string, more: Partial<SourceListing> = {}) => ({
      payTo,
      network: 'eip155:8453',
      priceUsd: 0.01,
      ...more,
    });

    it('holds nobody to a URL one list names twice with two wallets, and says why', () => {
      const plan = planCrawl(
        [listing(VICTIM, 'cdp', terms(ATTACKER)), listing(VICTIM, 'cdp', terms(REAL))],
        null,
      );
      const [endpoint] = plan.endpoints;
      expect(endpoint?.listing).toMatchObject({ payTo: null, network: null, priceUsd: null, asset: null });
      expect(endpoint?.dispute).toEqual({
        fields: ['pay_to'],
        count: 2,
        listings: [
          {
            source: 'cdp',
            url: VICTIM,
            method: 'GET',
            price_usd: 0.01,
            network: 'eip155:8453',
            pay_to: ATTACKER,
            first_party: false,
          },
          {
            source: 'cdp',
            url: VICTIM,
            method: 'GET',
            price_usd: 0.01,
            network: 'eip155:8453',
            pay_to: REAL,
            first_party: false,
          },
        ],
      });
    });

    it('disputes a network or a price across sources too, but not an address written in another case', () => {
      const plan = planCrawl(
        [
          listing(VICTIM, 'cdp', terms(REAL)),
          listing(VICTIM, 'payai', terms(REAL.toUpperCase().replace('0X', '0x'), { network: 'eip155:137' })),
          listing('https://b.example/p', 'cdp', terms(REAL)),
          listing('https://b.example/p', 'payai', terms(REAL, { priceUsd: 0.5 })),
          listing('https://c.example/same', 'cdp', terms(REAL)),
          listing(
            'https://c.example/same',
            'payai',
            terms(REAL.toUpperCase().replace('0X', '0x'), { priceUsd: null }),
          ),
        ],
        null,
      );
      expect(plan.endpoints.map((e) => e.dispute?.fields ?? null)).toEqual([
        ['network'],
        ['price_usd'],
        null,
      ]);
      expect(plan.endpoints[2]?.listing).toMatchObject({ source: 'cdp', payTo: REAL, priceUsd: 0.01 });
    });

    it("takes the origin's own /.well-known/x402 over third-party listings: the side it agrees with is the expectation", () => {
      const plan = planCrawl(
        [
          listing(VICTIM, 'a-list', terms(ATTACKER)),
          listing(VICTIM, 'b-list', terms(REAL)),
          listing(VICTIM, 'victim.example', { payTo: REAL, firstParty: true }),
        ],
        null,
      );
      const [endpoint] = plan.endpoints;
      expect(endpoint?.dispute).toBeUndefined();
      expect(endpoint?.listing).toMatchObject({ source: 'b-list', payTo: REAL, priceUsd: 0.01 });
      expect(endpoint).toMatchObject({ sourceList: 'b-list', alsoListedIn: ['a-list', 'victim.example'] });
    });

    it('keeps the dispute when the first-party document names no wallet, and when it names two', () => {
      const silent = planCrawl(
        [
          listing(VICTIM, 'a-list', terms(ATTACKER)),
          listing(VICTIM, 'b-list', terms(REAL)),
          listing(VICTIM, 'victim.example', { firstParty: true }),
        ],
        null,
      );
      expect(silent.endpoints[0]?.dispute?.fields).toEqual(['pay_to']);
      const torn = planCrawl(
        [
          listing(VICTIM, 'victim.example', { payTo: REAL, firstParty: true }),
          listing(VICTIM, 'victim.example', { payTo: ATTACKER, firstParty: true }),
        ],
        null,
      );
      expect(torn.endpoints[0]?.dispute?.fields).toEqual(['pay_to']);
    });
  });
});
