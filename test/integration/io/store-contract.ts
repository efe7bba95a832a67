/**
 * The store contract: every store implementation passes this suite (conventions §3 item 14).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../../core/model.ts';
import type { ReceiptRow, Store } from '../../../io/store.ts';

export function testStore(name: string, open: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    const row = (id: string, issuedAt: string, extra: Partial<ReceiptRow> = {}): ReceiptRow => ({
      id,
      type: 'check',
      issuedAt,
      url: 'https://a.example/x',
      urlNorm: 'https://a.example/x',
      method: 'GET',
      verdict: 'pay',
      reason: 'price_ok',
      checkType: 'dry-run',
      mode: 'live',
      tier: 'free',
      body: { id, issued_at: issuedAt },
      ...extra,
    });
    const obs = (at: string, payTo: string | null): Observation => ({
      observed_at: at,
      http_status: 402,
      price_usd: 0.01,
      amount_atomic: '10000',
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      pay_to: payTo,
    });

    it('indexes receipts idempotently and reads them back by id', async () => {
      store.indexReceipts([row('sc-a', '2026-11-01T00:00:00.000Z')]);
      store.indexReceipts([row('sc-a', '2026-11-01T00:00:00.000Z', { body: { changed: true } })]);
      expect(await store.receipt('sc-a')).toEqual({ id: 'sc-a', issued_at: '2026-11-01T00:00:00.000Z' });
      expect(await store.receipt('sc-missing')).toBeNull();
    });

    it('answers the latest check receipt of a URL', async () => {
      store.indexReceipts([
        row('sc-old', '2026-11-01T00:00:00.000Z'),
        row('sc-new', '2026-11-02T00:00:00.000Z'),
        row('sc-other', '2026-11-03T00:00:00.000Z', { urlNorm: 'https://b.example' }),
      ]);
      expect((await store.latestReceiptByUrl('https://a.example/x'))?.id).toBe('sc-new');
      expect(await store.latestReceiptByUrl('https://nobody.example')).toBeNull();
    });

    it('pages receipts newest first and filters dry runs', async () => {
      for (let i = 0; i < 7; i++) {
        const mode = i % 2 === 0 ? 'dry-run' : 'live';
        store.indexReceipts([row(`sc-${i}`, `2026-11-0${i + 1}T00:00:00.000Z`, { mode })]);
      }
      const first = await store.listReceipts({ mode: 'dry-run', page: 1, pageSize: 3 });
      expect(first.total).toBe(4);
      expect(first.items.map((item) => item.id)).toEqual(['sc-6', 'sc-4', 'sc-2']);
      const second = await store.listReceipts({ mode: 'dry-run', page: 2, pageSize: 3 });
      expect(second.items.map((item) => item.id)).toEqual(['sc-0']);
      expect((await store.listReceipts({ page: 1, pageSize: 100 })).total).toBe(7);
    });

    it('keeps the last 30 observations of an endpoint, newest first', async () => {
      expect(await store.observations('https://a.example/x', 'GET')).toEqual([]);
      for (let i = 0; i < 35; i++) {
        const at = new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString();
        store.addObservation('https://a.example/x', 'GET', obs(at, `0x${String(i).padStart(40, '0')}`));
      }
      const list = await store.observations('https://a.example/x', 'GET');
      expect(list).toHaveLength(30);
      expect(list[0]?.observed_at).toBe('2026-11-01T00:34:00.000Z');
      expect(list[29]?.observed_at).toBe('2026-11-01T00:05:00.000Z');
      expect(await store.observations('https://a.example/x', 'POST')).toEqual([]);
      store.addObservation('https://a.example/x', 'GET', obs('2026-11-02T00:00:00.000Z', null));
      expect((await store.observations('https://a.example/x', 'GET'))[0]?.pay_to).toBeNull();
    });

    it('imports listings per source, replacing that source only', async () => {
      const listing = (source: string, price: number) => ({
        urlNorm: 'https://a.example/x',
        url: 'https://a.example/x',
        method: 'GET' as const,
        priceUsd: price,
        network: 'eip155:8453',
        asset: null,
        payTo: '0x1111111111111111111111111111111111111111',
        source,
      });
      expect(await store.importListings([listing('bazaar', 0.01), listing('zeta', 0.05)])).toBe(2);
      expect((await store.listing('https://a.example/x', 'GET'))?.priceUsd).toBe(0.01);
      await store.importListings([listing('bazaar', 0.02)]);
      expect((await store.listing('https://a.example/x', 'GET'))?.priceUsd).toBe(0.02);
      expect((await store.listing('https://a.example/x', 'POST'))?.source).toBe('bazaar');
      expect(await store.listing('https://b.example', 'GET')).toBeNull();
    });
  });
}
