import { describe, expect, it } from 'vitest';
import {
  detectShape,
  parseDiscoveryPage,
  parseSearchPage,
  parseWellKnown,
  parseX402scanPage,
} from '../../../core/listing-pages.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';

const WALLET = '0x1111111111111111111111111111111111111111';
const DAI = '0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb';

const v2Item = {
  resource: 'https://API.seller.example/weather/',
  type: 'http',
  x402Version: 2,
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '10000',
      asset: BASE_USDC,
      payTo: WALLET,
      maxTimeoutSeconds: 60,
    },
  ],
  lastUpdated: '2026-09-01T10:30:00Z',
  extensions: {
    bazaar: { info: { input: { type: 'http', method: 'GET', queryParams: { city: 'paris', days: 3 } } } },
  },
};
const v1UnderV2 = {
  resource: 'https://old.example/post',
  type: 'http',
  x402Version: 2,
  lastUpdated: 1_790_000_000,
  metadata: { anything: true },
  accepts: [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '25000',
      asset: BASE_USDC,
      payTo: WALLET,
      outputSchema: { input: { type: 'http', method: 'post', body: { q: 'x' } } },
    },
  ],
};

describe('parseDiscoveryPage', () => {
  it('reads v2 items and v1-shaped accepts under v2, numeric or ISO lastUpdated', () => {
    const page = parseDiscoveryPage(
      { x402Version: 2, items: [v2Item, v1UnderV2], pagination: { limit: 100, offset: 0, total: 2 } },
      'cdp',
    );
    expect(page).toMatchObject({ ok: true, count: 2, total: 2, refused: 0 });
    if (!page.ok) return;
    expect(page.listings).toEqual([
      {
        url: 'https://api.seller.example/weather/',
        urlNorm: 'https://api.seller.example/weather',
        method: 'GET',
        priceUsd: 0.01,
        network: BASE,
        asset: BASE_USDC,
        payTo: WALLET,
        source: 'cdp',
        example: { query: { city: 'paris', days: '3' }, body: null },
        metadata: {
          serviceName: null,
          tags: [],
          description: null,
          iconUrl: null,
          lastUpdated: '2026-09-01T10:30:00.000Z',
        },
      },
      {
        url: 'https://old.example/post',
        urlNorm: 'https://old.example/post',
        method: 'POST',
        priceUsd: 0.025,
        network: BASE,
        asset: BASE_USDC,
        payTo: WALLET,
        source: 'cdp',
        example: { query: null, body: { q: 'x' } },
        metadata: {
          serviceName: null,
          tags: [],
          description: null,
          iconUrl: null,
          lastUpdated: '2026-09-21T14:13:20.000Z',
        },
      },
    ]);
  });

  it('refuses bad items one by one and says why the first was refused', () => {
    const page = parseDiscoveryPage(
      { items: [42, { ...v2Item, type: 'mcp' }, { ...v2Item, resource: 'file:///etc/passwd' }, v2Item] },
      'payai',
    );
    expect(page).toMatchObject({ ok: true, count: 4, total: null, refused: 3 });
    if (page.ok) expect(page.firstRefusal).toMatch(/^item 0: /);
  });

  it('never guesses a price in another asset or from a decimal amount', () => {
    const dai = { ...v2Item, accepts: [{ ...v2Item.accepts[0], asset: DAI, amount: '1000000000000000000' }] };
    const decimal = { ...v2Item, accepts: [{ ...v2Item.accepts[0], amount: '0.01' }] };
    const page = parseDiscoveryPage({ items: [dai, decimal] }, 'cdp');
    expect(page.ok && page.listings.map((l) => [l.priceUsd, l.asset])).toEqual([
      [null, DAI],
      [null, BASE_USDC],
    ]);
  });

  it('prefers the option in canonical USDC as the expectation', () => {
    const two = {
      ...v2Item,
      accepts: [
        { ...v2Item.accepts[0], asset: DAI },
        { ...v2Item.accepts[0], payTo: '0x22' },
      ],
    };
    const page = parseDiscoveryPage({ items: [two] }, 'cdp');
    expect(page.ok && page.listings[0]?.payTo).toBe('0x22');
  });

  it('drops text a signed receipt could not hold', () => {
    const lone = { ...v2Item, accepts: [{ ...v2Item.accepts[0], payTo: '0x\ud800' }] };
    const page = parseDiscoveryPage({ items: [lone] }, 'cdp');
    expect(page.ok && page.listings[0]?.payTo).toBeNull();
  });

  it('fails a page that is not a discovery page', () => {
    for (const garbage of [null, 'html', [], { items: 'x' }, { data: [] }]) {
      expect(parseDiscoveryPage(garbage, 'cdp')).toMatchObject({
        ok: false,
        message: expect.stringMatching(/^not /),
      });
    }
  });
});

describe('parseX402scanPage', () => {
  it('reads USD prices and the next-page flag', () => {
    const page = parseX402scanPage(
      {
        data: [
          {
            resource: 'https://scan.example/a',
            method: 'POST',
            accepts: [{ network: 'base_sepolia', maxAmountRequired: 0.05, payTo: WALLET, asset: BASE_USDC }],
          },
          { resource: 'https://scan.example/b', accepts: [{ network: 'base', maxAmountRequired: '10000' }] },
        ],
        pagination: { page: 0, page_size: 2, has_next_page: true },
      },
      'scan',
    );
    expect(page).toMatchObject({ ok: true, hasNext: true, count: 2, refused: 0 });
    expect(page.ok && page.listings.map((l) => [l.method, l.priceUsd, l.network])).toEqual([
      ['POST', 0.05, 'eip155:84532'],
      ['GET', null, BASE],
    ]);
  });

  it('fails without pagination', () => {
    expect(parseX402scanPage({ data: [] }, 'scan').ok).toBe(false);
  });
});

describe('parseWellKnown', () => {
  it('reads the resources of version 1 and the draft items form', () => {
    const one = parseWellKnown(
      { version: 1, resources: ['https://o.example/a', 'javascript:alert(1)'] },
      'o.example',
    );
    expect(one).toMatchObject({ ok: true, refused: 1 });
    expect(one.ok && one.listings.map((l) => [l.url, l.method, l.payTo])).toEqual([
      ['https://o.example/a', 'GET', null],
    ]);
    const two = parseWellKnown(
      { x402Version: 2, items: [{ ...v2Item, resource: { url: 'https://o.example/b' } }] },
      'o',
    );
    expect(two.ok && two.listings[0]?.url).toBe('https://o.example/b');
  });
});

describe('detectShape', () => {
  it('tells the shapes apart', () => {
    expect(detectShape({ items: [] })).toBe('discovery');
    expect(detectShape({ data: [], pagination: {} })).toBe('x402scan');
    expect(detectShape({ resources: [] })).toBe('well-known');
    expect(detectShape([])).toBe('listings');
    expect(detectShape('<html>')).toBeNull();
  });
});

describe('parseSearchPage', () => {
  it('reads the search shape and the list shape, in order', () => {
    const search = parseSearchPage(
      { x402Version: 2, resources: [v2Item, v1UnderV2], pagination: { cursor: null } },
      'cdp',
    );
    expect(search.ok && search.listings.map((l) => l.url)).toEqual([
      'https://api.seller.example/weather/',
      'https://old.example/post',
    ]);
    const list = parseSearchPage({ items: [v1UnderV2] }, 'cdp');
    expect(list.ok && list.listings).toHaveLength(1);
    expect(parseSearchPage({ nothing: true }, 'cdp').ok).toBe(false);
  });
});
