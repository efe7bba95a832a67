import { describe, expect, it } from 'vitest';
import { barChart } from '../../../core/charts.ts';
import {
  escapeXml,
  formatCount,
  formatShare,
  formatTime,
  formatUsd,
  receiptView,
} from '../../../core/format.ts';
import { headersFile, siteCacheControl } from '../../../core/site-cache.ts';

describe('site formatting', () => {
  it('writes prices with the decimals they need and a dash for none', () => {
    expect(formatUsd(0.0125)).toBe('USD 0.0125');
    expect(formatUsd(9)).toBe('USD 9.00');
    expect(formatUsd(0.1)).toBe('USD 0.10');
    expect(formatUsd(0.000001)).toBe('USD 0.000001');
    expect(formatUsd(null)).toBe('—');
    expect(formatUsd(Number.NaN)).toBe('—');
  });

  it('writes times in UTC to the minute, counts and shares', () => {
    expect(formatTime('2026-11-24T01:02:03.456Z')).toBe('2026-11-24 01:02 UTC');
    expect(formatTime('2026-11-24T03:02:03+02:00')).toBe('2026-11-24 01:02 UTC');
    expect(formatTime('not a time')).toBe('—');
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatShare(1, 3)).toBe('33 %');
    expect(formatShare(1, 0)).toBe('0 %');
  });

  it('shows a receipt: plain words for the reason, the signature, dashes for what an old receipt lacks', () => {
    const view = receiptView({
      id: 'sc-x',
      url: 'https://a.example/x',
      method: 'GET',
      verdict: 'skip',
      reason: 'pay_to_mismatch',
      kid: 'k1',
      signature: 'sig',
      listing: { source: 'cdp', price_usd: 0.01 },
    });
    expect(view.why).toBe('The wallet asked for differs from the expected wallet.');
    expect(view.title).toBe('GET https://a.example/x');
    expect(view.signature.map((f) => f.value)).toEqual(['k1', 'sig']);
    expect(view.terms.find((f) => f.label === 'Listed or claimed price')?.value).toBe('USD 0.01');
    expect(view.terms.find((f) => f.label === 'Pay to')?.value).toBe('—');
    expect(view.decision.find((f) => f.label === 'Listed in')?.value).toBe('cdp');
    expect(receiptView({ id: 'sc-y', verdict: 'pay', reason: 'price_ok' }).signed).toBe(false);
  });
});

describe('escapeXml', () => {
  it('escapes the five characters markup gives meaning to, apostrophes as &#39;', () => {
    expect(escapeXml(`<a href="x" title='y'>Tom & Jerry's</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;',
    );
    expect(escapeXml('&amp;')).toBe('&amp;amp;');
    expect(escapeXml('plain text, ’curly’ quotes kept')).toBe('plain text, ’curly’ quotes kept');
  });
});

describe('site charts and cache headers', () => {
  it('draws one rect per part, labels the totals and escapes text', () => {
    const svg = barChart(
      [
        { label: 'a<b', parts: [3, 1] },
        { label: 'c', parts: [0, 2] },
      ],
      {
        title: 'T & U',
        series: [
          { name: 'pay', color: '#111111' },
          { name: 'skip', color: '#222222' },
        ],
      },
    );
    expect(svg.match(/<rect [^>]*fill="#(111111|222222)"/g)).toHaveLength(6); // 4 bars + 2 legend keys
    expect(svg).toContain('<title>T &amp; U</title>');
    expect(svg).toContain('a&lt;b');
    expect(svg).toContain('>4</text>');
  });

  it('caches hashed assets and receipt files for a year, everything else five minutes, in both places', () => {
    expect(siteCacheControl('/_astro/verify.B8CA3dkQ.js')).toBe('public, max-age=31536000, immutable');
    expect(siteCacheControl('/receipts/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa.json')).toContain('immutable');
    expect(siteCacheControl('/receipts/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa/')).toBe('public, max-age=300');
    expect(siteCacheControl('/v1/skips.json')).toBe('public, max-age=300');
    expect(headersFile()).toContain('/receipts/*.json\n  Cache-Control: public, max-age=31536000, immutable');
  });
});
