import { describe, expect, it } from 'vitest';
import {
  endpointKey,
  endpointKeyOfUrl,
  endpointPagePath,
  hostPagePath,
} from '../../../core/endpoint-paths.ts';
import {
  type EndpointCheck,
  endpointTimeline,
  formatDay,
  shortHex,
  termsChanges,
  timelineSvg,
} from '../../../core/endpoint-timeline.ts';

const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const BASE = 'eip155:8453';
const FROM = new Date('2026-01-01T00:00:00Z');
const TO = new Date('2026-04-01T00:00:00Z');

let n = 0;
function check(at: string, over: Partial<EndpointCheck> = {}): EndpointCheck {
  return {
    at,
    verdict: 'pay',
    reason: 'price_ok',
    price_usd: 0.01,
    pay_to: A,
    network: BASE,
    receipt_id: `sc-${String(++n).padStart(26, 'a')}`,
    ...over,
  };
}

describe('endpoint page paths', () => {
  it('keys an endpoint by method and normalized URL: 16 hex digits, stable, URL-safe', () => {
    const key = endpointKey('https://a.example/x', 'GET');
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    expect(endpointKey('https://a.example/x', 'get')).toBe(key);
    expect(endpointKey('https://a.example/x', 'POST')).not.toBe(key);
    expect(endpointKeyOfUrl('HTTPS://A.example:443/x/', 'GET')).toBe(key);
    expect(endpointKeyOfUrl('not a url', 'GET')).toBeNull();
    expect(endpointPagePath(key)).toBe(`/endpoints/${key}/`);
    expect(hostPagePath('a.example')).toBe('/hosts/a.example/');
  });
});

describe('endpointTimeline', () => {
  it('marks a wallet change at the check that first saw the new wallet, and counts stability from it', () => {
    const checks = [
      check('2026-02-01T00:00:00Z'),
      check('2026-02-08T00:00:00Z'),
      check('2026-03-01T12:00:00Z', { pay_to: B }),
      check('2026-03-08T00:00:00Z', { pay_to: B.toUpperCase().replace('0X', '0x') }),
    ];
    const t = endpointTimeline(checks, FROM, TO);
    expect(t.changes).toEqual([
      { at: '2026-03-01T12:00:00Z', field: 'pay_to', from: A, to: B, receipt_id: checks[2]?.receipt_id },
    ]);
    // A checksummed (upper-case) wallet is the same wallet.
    expect(t.stable).toEqual({ since: '2026-03-01T12:00:00Z', days: 30, at_least: false });
    expect(t.rows.map((r) => [r.first, r.last, r.checks])).toEqual([
      ['2026-02-01T00:00:00Z', '2026-02-08T00:00:00Z', 2],
      ['2026-03-01T12:00:00Z', '2026-03-08T00:00:00Z', 2],
    ]);
  });

  it('leaves out checks outside the window, sorts the rest, and says when stability reaches the window start', () => {
    const t = endpointTimeline(
      [
        check('2026-03-01T00:00:00Z'),
        check('2025-12-01T00:00:00Z', { pay_to: B }),
        check('2026-01-15T00:00:00Z'),
      ],
      FROM,
      TO,
    );
    expect(t.checks.map((c) => c.at)).toEqual(['2026-01-15T00:00:00Z', '2026-03-01T00:00:00Z']);
    expect(t.changes).toEqual([]);
    expect(t.stable).toEqual({ since: '2026-01-15T00:00:00Z', days: 76, at_least: true });
  });

  it('ignores checks without terms for changes and stability, but keeps them as verdict bands', () => {
    const none = { price_usd: null, pay_to: null, network: null };
    const t = endpointTimeline(
      [
        check('2026-02-01T00:00:00Z'),
        check('2026-02-10T00:00:00Z', { ...none, verdict: 'recheck', reason: 'timeout' }),
        check('2026-02-20T00:00:00Z', { network: 'eip155:137', verdict: 'skip', reason: 'other_network' }),
      ],
      FROM,
      TO,
    );
    expect(t.changes.map((c) => [c.field, c.from, c.to])).toEqual([['network', BASE, 'eip155:137']]);
    expect(t.bands).toEqual([
      { verdict: 'pay', from: '2026-02-01T00:00:00Z', to: '2026-02-10T00:00:00Z', checks: 1 },
      { verdict: 'recheck', from: '2026-02-10T00:00:00Z', to: '2026-02-20T00:00:00Z', checks: 1 },
      { verdict: 'skip', from: '2026-02-20T00:00:00Z', to: TO.toISOString(), checks: 1 },
    ]);
    expect(t.stable?.since).toBe('2026-02-20T00:00:00Z');
    expect(termsChanges([check('2026-02-01T00:00:00Z', none)])).toEqual([]);
  });

  it('has no stability without terms', () => {
    const t = endpointTimeline(
      [check('2026-02-01T00:00:00Z', { price_usd: null, pay_to: null, network: null })],
      FROM,
      TO,
    );
    expect(t.stable).toBeNull();
  });
});

describe('timelineSvg', () => {
  it('draws a labelled wallet-change mark at its date, verdict bands in words, dated ticks and a price label', () => {
    const t = endpointTimeline(
      [check('2026-02-01T00:00:00Z'), check('2026-03-01T12:00:00Z', { pay_to: B, price_usd: 0.02 })],
      FROM,
      TO,
    );
    const svg = timelineSvg(t, 'History of <GET https://a.example/x>');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('aria-label="History of &lt;GET https://a.example/x&gt;"');
    expect(svg).toContain('data-field="pay_to" data-at="2026-03-01T12:00:00Z"');
    expect(svg).toContain('wallet changed 1 Mar');
    expect(svg).toContain('price changed on 1 Mar 2026');
    expect(svg).toContain('>pay</text>');
    expect(svg).toContain('>1 Jan 2026</text>');
    expect(svg).toContain('>verdict</text>');
    expect(svg).toContain('price $0.02');
    // Only whole numbers with one decimal in coordinates: no NaN or Infinity.
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('draws each verdict with its own texture, the same in its bands and its legend swatch, not colour alone', () => {
    const t = endpointTimeline(
      [
        check('2026-01-10T00:00:00Z'),
        check('2026-02-01T00:00:00Z', { verdict: 'skip', reason: 'price_above_max' }),
        check('2026-03-01T00:00:00Z', { verdict: 'recheck', reason: 'probe_failed' }),
      ],
      FROM,
      TO,
    );
    const svg = timelineSvg(t, 't');
    const fills = new Map<string, { band: string; swatch: string }>();
    for (const verdict of ['pay', 'skip', 'recheck']) {
      const band = new RegExp(`<title>${verdict} from [^<]*</title><rect [^>]*fill="([^"]+)"`).exec(svg)?.[1];
      const swatch = new RegExp(`<rect [^>]*fill="([^"]+)"[^>]*/><text [^>]*>${verdict}</text>`).exec(
        svg,
      )?.[1];
      expect(band, verdict).toBeDefined();
      expect(swatch, verdict).toBe(band);
      fills.set(verdict, { band: band as string, swatch: swatch as string });
    }
    // Skip and recheck are both dark warm colours: each gets a pattern of its own (stripes, dots), pay stays solid.
    const skip = fills.get('skip')?.band as string;
    const recheck = fills.get('recheck')?.band as string;
    expect(skip).toMatch(/^url\(#[\w-]+\)$/);
    expect(recheck).toMatch(/^url\(#[\w-]+\)$/);
    expect(skip).not.toBe(recheck);
    const pattern = (fill: string) =>
      new RegExp(`<pattern id="${fill.slice(5, -1)}"[^>]*>(.*?)</pattern>`).exec(svg)?.[1] ?? '';
    const shapes = (fill: string) => pattern(fill).replace(/fill="[^"]*"|fill-opacity="[^"]*"/g, '');
    expect(pattern(skip)).not.toBe('');
    expect(pattern(recheck)).not.toBe('');
    // The patterns differ in their shapes, with the colours taken out.
    expect(shapes(skip)).not.toBe(shapes(recheck));
    expect(fills.get('pay')?.band).not.toMatch(/^url\(/);
  });

  it('says so when no USDC price was read', () => {
    const t = endpointTimeline([check('2026-02-01T00:00:00Z', { price_usd: null })], FROM, TO);
    expect(timelineSvg(t, 't')).toContain('No USDC price read in this window');
  });
});

describe('formatDay and shortHex', () => {
  it('writes days unambiguously and shortens only long hex', () => {
    expect(formatDay('2026-03-03T23:59:00Z')).toBe('3 Mar 2026');
    expect(formatDay('2026-12-25T00:00:00Z', false)).toBe('25 Dec');
    expect(shortHex(A)).toBe('0xaaaa…aaaa');
    expect(shortHex('eip155:8453')).toBe('eip155:8453');
  });
});
