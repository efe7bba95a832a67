/**
 * Every field of a catalog item of the public lists' shape, read right: the price from the field of the item's own
 * x402Version (a disagreement noted, never guessed), the metadata, and each network and asset form kept with its
 * plain reason.
 */
import { describe, expect, it } from 'vitest';
import { planCrawl } from '../../../core/crawl-plan.ts';
import { parseDiscoveryPage } from '../../../core/listing-pages.ts';
import { LISTING_NOTES, listingNoteOf, listingNoteRules, metadataOf } from '../../../core/listing-terms.ts';
import { readListingRecords } from '../../../core/listings.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { rulesDocument } from '../../../core/rules.ts';
import { catalogItem, networkForms } from '../../../sandbox/catalog-items.ts';

const WALLET = '0x2222222222222222222222222222222222222222';
const one = (item: unknown) => {
  const page = parseDiscoveryPage({ items: [item] }, 'cdp');
  if (!page.ok) throw new Error(page.message);
  expect(page.refused).toBe(0);
  return page.listings[0]!;
};

describe('a catalog item of the public shape', () => {
  it.each(networkForms(WALLET).map((form) => [form.label, form] as const))(
    'keeps %s with its network and a plain reason when no price is read',
    (_label, form) => {
      const listing = one(
        catalogItem({
          url: 'https://seller.example/x',
          ...('version' in form ? { x402Version: form.version } : {}),
          options: [form.option],
        }),
      );
      expect(listing.network).toBe(form.network);
      expect(listing.payTo).toBe(form.option.payTo);
      expect(listing.note).toBe(form.note ?? undefined);
      if (form.note === null) expect(listing.priceUsd).toBe(0.01);
      else expect(listing.priceUsd).toBeNull();
    },
  );

  it('reads the price from the field of its own x402Version, and notes a disagreement', () => {
    const option = {
      network: BASE,
      asset: BASE_USDC,
      payTo: WALLET,
      amount: '10000',
      maxAmountRequired: '50000',
    };
    const v2 = one(catalogItem({ url: 'https://s.example/a', x402Version: 2, options: [option] }));
    expect([v2.priceUsd, v2.note]).toEqual([0.01, 'amounts_disagree']);
    const v1 = one(catalogItem({ url: 'https://s.example/a', x402Version: 1, options: [option] }));
    expect([v1.priceUsd, v1.note]).toEqual([0.05, 'amounts_disagree']);
    // Without a version, neither field is taken: the price is not guessed.
    const { x402Version: _v, ...unversioned } = catalogItem({
      url: 'https://s.example/a',
      options: [option],
    });
    expect(one(unversioned)).toMatchObject({ priceUsd: null, note: 'amounts_disagree' });
    // Both fields saying the same thing is no disagreement.
    const agree = { ...option, maxAmountRequired: '10000' };
    const same = one(catalogItem({ url: 'https://s.example/a', options: [agree] }));
    expect([same.priceUsd, same.note]).toEqual([0.01, undefined]);
  });

  it('notes an amount that is not atomic and an item without options', () => {
    const decimal = { network: BASE, asset: BASE_USDC, payTo: WALLET, amount: '0.01' };
    expect(one(catalogItem({ url: 'https://s.example/a', options: [decimal] }))).toMatchObject({
      priceUsd: null,
      note: 'amount_not_atomic',
    });
    expect(one(catalogItem({ url: 'https://s.example/a', options: [] })).note).toBe('no_payment_option');
  });

  it('reads serviceName, tags, description, iconUrl and lastUpdated as metadata', () => {
    const listing = one(
      catalogItem({
        url: 'https://s.example/a',
        options: [{ network: BASE, asset: BASE_USDC, payTo: WALLET, amount: '10000' }],
        serviceName: 'Weather Now',
        tags: ['weather', 'forecast', 'weather', '  ', 'x'.repeat(65)],
        description: 'Current weather\nfor a city.',
        iconUrl: 'https://s.example/icon.png',
        lastUpdated: 1_772_366_400,
      }),
    );
    expect(listing.metadata).toEqual({
      serviceName: 'Weather Now',
      tags: ['weather', 'forecast'],
      description: 'Current weather for a city.',
      iconUrl: 'https://s.example/icon.png',
      lastUpdated: '2026-03-01T12:00:00.000Z',
    });
  });

  it('refuses hostile metadata values member by member, never the listing', () => {
    const m = metadataOf({
      serviceName: 'Evil\u202Ename',
      tags: 'not-an-array',
      description: 'x'.repeat(5000),
      iconUrl: 'javascript:alert(1)',
      lastUpdated: 'yesterday',
      metadata: { serviceName: 'ignored: the top level wins' },
    });
    expect(m.serviceName).toBeNull();
    expect(m.tags).toEqual([]);
    expect([...(m.description ?? '')].length).toBe(1000);
    expect(m.iconUrl).toBeNull();
    expect(m.lastUpdated).toBeNull();
    expect(
      metadataOf({ metadata: { serviceName: 'Nested', iconUrl: 'https://u:p@x.example/i' } }),
    ).toMatchObject({
      serviceName: 'Nested',
      iconUrl: null,
    });
  });

  it('carries metadata and note through the plan, and a crawl listings file back into a source', () => {
    const item = catalogItem({
      url: 'https://s.example/a',
      options: [{ network: 'aws:base', asset: BASE_USDC, payTo: WALLET, amount: '10000' }],
      serviceName: 'Odd',
    });
    const plan = planCrawl([one(item)], null);
    expect(plan.endpoints[0]).toMatchObject({
      note: 'network_unsupported',
      metadata: { serviceName: 'Odd' },
    });
    expect(plan.endpoints[0]?.listing).not.toHaveProperty('metadata');
    const back = readListingRecords([
      {
        url: 'https://s.example/a',
        network: 'aws:base',
        source: 'cdp',
        listing_note: 'network_unsupported',
        service_name: 'Odd',
        tags: [],
        description: null,
        icon_url: null,
        last_updated: null,
      },
    ]);
    expect(back.refused).toBe(0);
    expect(back.listings[0]).toMatchObject({ note: 'network_unsupported', metadata: { serviceName: 'Odd' } });
  });

  it('publishes every note with its words in /rules.json', () => {
    expect(listingNoteRules().map((n) => n.code)).toEqual([...LISTING_NOTES]);
    expect(rulesDocument().listing_notes).toEqual(listingNoteRules());
    expect(listingNoteOf(null)).toBe('no_payment_option');
  });
});
