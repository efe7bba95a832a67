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
          payTo: '0xp',
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
});
