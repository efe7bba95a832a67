import { describe, expect, it } from 'vitest';
import { parseListings, readListingRecords } from '../../../core/listings.ts';

const good = {
  url: 'https://API.example/x/',
  method: 'POST',
  price_usd: 0.01,
  network: 'base',
  pay_to: '0x1111111111111111111111111111111111111111',
  source: 'cdp',
};

describe('parseListings (npm run listings:import)', () => {
  it('normalizes a record', () => {
    const parsed = parseListings([good]);
    expect(parsed).toEqual({
      ok: true,
      rows: [
        {
          url: 'https://api.example/x/',
          urlNorm: 'https://api.example/x',
          method: 'POST',
          priceUsd: 0.01,
          network: 'eip155:8453',
          asset: null,
          payTo: good.pay_to,
          source: 'cdp',
        },
      ],
    });
  });

  it('refuses the whole file for one bad record, naming it', () => {
    const parsed = parseListings([good, { ...good, url: 'ftp://x' }]);
    expect(parsed).toMatchObject({ ok: false, message: expect.stringMatching(/^record 1 \(url\)/) });
  });

  it('refuses a file whose records of one URL disagree on the wallet, naming two of them', () => {
    const other = { ...good, url: 'https://api.example/x', source: 'other' };
    expect(parseListings([good, { ...good, url: 'https://b.example' }, other]).ok).toBe(true);
    const parsed = parseListings([good, { ...other, pay_to: '0x9999999999999999999999999999999999999999' }]);
    expect(parsed).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^records 0 and 1 \(url\): .* another pay_to/),
    });
  });

  it('refuses a lone surrogate, which no signed receipt naming the listing could hold', () => {
    const parsed = parseListings([{ ...good, pay_to: '0x\ud800' }]);
    expect(parsed).toMatchObject({ ok: false, message: expect.stringMatching(/^record 0 \(pay_to\)/) });
  });
});

describe('readListingRecords (a listings file as a crawl source)', () => {
  it('keeps the good records, counts the bad ones and says why the first was refused', () => {
    const read = readListingRecords([good, 42, { ...good, url: 'nope' }, { ...good, source: 'payai' }]);
    expect(read.listings.map((l) => [l.urlNorm, l.source, l.example])).toEqual([
      ['https://api.example/x', 'cdp', null],
      ['https://api.example/x', 'payai', null],
    ]);
    expect(read.refused).toBe(2);
    expect(read.firstRefusal).toMatch(/^record 1/);
  });
});
