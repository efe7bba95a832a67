/**
 * The store contract: every store implementation passes this suite.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newestFirst, paidCallRecord } from '../../../core/catalog.ts';
import type { Observation } from '../../../core/model.ts';
import { normalizeUrl } from '../../../core/url.ts';
import type { ReceiptRow, Store } from '../../../io/store/port.ts';

/** The plain form of `https://a.example/x`: that URL exactly, GET. */
const PLAIN_X = { url: 'https://a.example/x', method: 'GET' } as const;

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

    it('indexes many receipts in one flush (several insert chunks), twice, keeping each once', async () => {
      const at = (i: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString();
      const rows = Array.from({ length: 450 }, (_, i) => row(`sc-many-${i}`, at(i)));
      store.indexReceipts(rows);
      await store.flush();
      store.indexReceipts(rows.map((r) => ({ ...r, body: { changed: true } })));
      store.indexReceipts([row('sc-many-last', at(999))]);
      expect((await store.listReceipts({ page: 1, pageSize: 10 })).total).toBe(451);
      expect(await store.receipt('sc-many-0')).toEqual({ id: 'sc-many-0', issued_at: at(0) });
      expect(await store.receipt('sc-many-449')).toEqual({ id: 'sc-many-449', issued_at: at(449) });
    });

    /** A check receipt body as `api/check.ts` signs it, with the members the public-state rule reads. */
    const checkBody = (id: string, issuedAt: string, extra: Record<string, unknown> = {}) => ({
      id,
      type: 'check',
      issued_at: issuedAt,
      mode: 'live',
      expected_source: null,
      claimed_price_usd: null,
      http_status: 402,
      ...extra,
    });
    const check = (id: string, issuedAt: string, extra: Record<string, unknown> = {}) =>
      row(id, issuedAt, { body: checkBody(id, issuedAt, extra) });

    it('answers the latest check receipt of a URL', async () => {
      store.indexReceipts([
        check('sc-old', '2026-11-01T00:00:00.000Z'),
        check('sc-new', '2026-11-02T00:00:00.000Z'),
        { ...check('sc-other', '2026-11-03T00:00:00.000Z'), urlNorm: 'https://b.example' },
      ]);
      expect((await store.latestReceiptByUrl('https://a.example/x', PLAIN_X))?.id).toBe('sc-new');
      expect(
        await store.latestReceiptByUrl('https://nobody.example', {
          url: 'https://nobody.example/',
          method: 'GET',
        }),
      ).toBeNull();
    });

    it('answers by URL only a receipt that is public state, never a newer dry run or caller expectation', async () => {
      store.indexReceipts([
        check('sc-public', '2026-11-01T00:00:00.000Z', { expected_source: 'listing' }),
        check('sc-dry', '2026-11-02T00:00:00.000Z', { mode: 'dry-run' }),
        check('sc-payto', '2026-11-03T00:00:00.000Z', { expected_source: 'request' }),
        check('sc-claimed', '2026-11-04T00:00:00.000Z', { claimed_price_usd: 0.5 }),
        check('sc-expiry', '2026-11-05T00:00:00.000Z', { expiry_check: {} }),
        check('sc-405', '2026-11-06T00:00:00.000Z', { http_status: 405 }),
        {
          ...check('sc-ps', '2026-11-07T00:00:00.000Z'),
          type: 'payment-status' as const,
          body: { type: 'payment-status' },
        },
      ]);
      expect((await store.latestReceiptByUrl('https://a.example/x', PLAIN_X))?.id).toBe('sc-public');
    });

    it('answers by URL only a receipt of the exact URL and method asked, never a variant of them', async () => {
      const u = 'https://a.example/x';
      store.indexReceipts([
        check('sc-plain', '2026-11-01T00:00:00.000Z'),
        { ...check('sc-slash', '2026-11-02T00:00:00.000Z'), url: 'https://a.example/x/' },
        { ...check('sc-post', '2026-11-03T00:00:00.000Z'), method: 'POST' },
      ]);
      expect((await store.latestReceiptByUrl(u, PLAIN_X))?.id).toBe('sc-plain');
      expect((await store.latestReceiptByUrl(u, { url: 'https://a.example/x/', method: 'GET' }))?.id).toBe(
        'sc-slash',
      );
      expect((await store.latestReceiptByUrl(u, { url: u, method: 'POST' }))?.id).toBe('sc-post');
      expect(await store.latestReceiptByUrl(u, { url: 'https://a.example/x?', method: 'GET' })).toBeNull();
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

    it('answers many histories asked at once each with its own endpoint and method, newest 30 first', async () => {
      // More endpoints than one statement binds, never read before: a store that reads them together from its
      // table must give each ask its own rows.
      const at = (i: number) => new Date(Date.UTC(2026, 10, 4, 0, 0, i)).toISOString();
      const url = (i: number) => `https://many.example/${i}`;
      for (let i = 0; i < 450; i++)
        store.addObservation(url(i), 'GET', obs(at(i), `0x${String(i).padStart(40, '0')}`));
      store.addObservation(url(3), 'POST', obs(at(999), null));
      for (let i = 0; i < 35; i++) store.addObservation(url(7), 'GET', obs(at(1000 + i), null));
      await store.flush();
      const asks = [...Array.from({ length: 450 }, (_, i) => i), 3, 7];
      const got = await Promise.all(asks.map((i) => store.observations(url(i), 'GET')));
      for (const [n, i] of asks.entries()) {
        if (i === 7) continue;
        expect(got[n], url(i)).toEqual([obs(at(i), `0x${String(i).padStart(40, '0')}`)]);
      }
      const seven = got[asks.length - 1] ?? [];
      expect(seven).toHaveLength(30);
      expect(seven[0]?.observed_at).toBe(at(1034));
      expect(seven[29]?.observed_at).toBe(at(1005));
      expect(await store.observations(url(3), 'POST')).toEqual([obs(at(999), null)]);
      expect(await store.observations(url(450), 'GET')).toEqual([]);
    });

    it("takes a crawl run's rows in idempotently, readable by id, by URL and in the endpoint's history", async () => {
      const at = (i: number) => new Date(Date.UTC(2026, 10, 2, 0, 0, i)).toISOString();
      const rows = Array.from({ length: 1200 }, (_, i) => check(`sc-run-${i}`, at(i), {})).map((r, i) => ({
        ...r,
        url: `https://run.example/${i}`,
        urlNorm: `https://run.example/${i}`,
      }));
      const observed = rows.map((r, i): [string, 'GET', Observation] => [
        r.urlNorm!,
        'GET',
        obs(at(i), null),
      ]);
      // Read once before, so a store that caches an endpoint's history must take the run's observation in.
      expect(await store.observations('https://run.example/7', 'GET')).toEqual([]);
      await store.importRunRows(rows, observed);
      await store.importRunRows(
        rows.map((r) => ({ ...r, body: { changed: true } })),
        [],
      );
      expect(await store.receipt('sc-run-1199')).toEqual(rows[1199]!.body);
      expect((await store.listReceipts({ page: 1, pageSize: 1 })).total).toBe(1200);
      expect(
        await store.latestReceiptByUrl('https://run.example/7', {
          url: 'https://run.example/7',
          method: 'GET',
        }),
      ).toEqual(rows[7]!.body);
      expect(await store.observations('https://run.example/7', 'GET')).toEqual([obs(at(7), null)]);
      expect((await store.observationsByHost('run.example', 5000)).length).toBe(1200);
    });

    it('keeps an observation whose price no 64-bit integer holds, and reads it back before and after a reopen', async () => {
      const huge = { ...obs('2026-11-03T00:00:00.000Z', null), price_usd: 1.157920892373162e71 };
      store.addObservation('https://big.example/x', 'GET', huge);
      store.addObservation('https://big.example/x', 'GET', obs('2026-11-03T00:01:00.000Z', null));
      expect((await store.observations('https://big.example/x', 'GET')).map((o) => o.price_usd)).toEqual([
        0.01, 1.157920892373162e71,
      ]);
      await store.flush();
      expect((await store.observations('https://big.example/x', 'GET'))[1]?.price_usd).toBe(
        1.157920892373162e71,
      );
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
      expect(await store.importListings([listing('bazaar', 0.01), listing('zeta', 0.01)])).toBe(2);
      expect(await store.listing('https://a.example/x', 'GET')).toMatchObject({
        source: 'bazaar',
        priceUsd: 0.01,
      });
      await store.importListings([listing('zeta', 0.02)]);
      // The two sources now disagree on the price: neither is an expectation.
      expect(await store.listing('https://a.example/x', 'GET')).toBeNull();
      await store.importListings([listing('bazaar', 0.02)]);
      expect((await store.listing('https://a.example/x', 'GET'))?.priceUsd).toBe(0.02);
      expect((await store.listing('https://a.example/x', 'POST'))?.source).toBe('bazaar');
      expect(await store.listing('https://b.example', 'GET')).toBeNull();
    });

    it('holds no listing of a URL whose listings disagree on wallet or network, as a check reads it too', async () => {
      const u = 'https://d.example/x';
      const listing = (source: string, method: 'GET' | 'POST', payTo: string, network = 'eip155:8453') => ({
        urlNorm: u,
        url: u,
        method,
        priceUsd: 0.01,
        network,
        asset: null,
        payTo,
        source,
      });
      await store.importListings([
        listing('a', 'GET', '0x1111111111111111111111111111111111111111'),
        listing('b', 'POST', '0x9999999999999999999999999999999999999999'),
      ]);
      expect(await store.listing(u, 'GET')).toBeNull();
      expect((await store.endpoint(u, 'GET')).listing).toBeNull();
      await store.importListings([
        listing('b', 'GET', '0x1111111111111111111111111111111111111111', 'eip155:137'),
      ]);
      expect(await store.listing(u, 'GET')).toBeNull();
      await store.importListings([listing('b', 'GET', '0x1111111111111111111111111111111111111111')]);
      expect(await store.listing(u, 'GET')).toMatchObject({ source: 'a' });
    });

    it("reads an endpoint's listing and observations in one call, as the two reads answer them", async () => {
      const u = 'https://e.example/x';
      expect(await store.endpoint(u, 'GET')).toEqual({ listing: null, observations: [] });
      await store.importListings([
        {
          urlNorm: u,
          url: u,
          method: 'POST',
          priceUsd: 0.01,
          network: 'eip155:8453',
          asset: null,
          payTo: null,
          source: 'a',
        },
        {
          urlNorm: u,
          url: u,
          method: 'GET',
          priceUsd: 0.01,
          network: null,
          asset: null,
          payTo: null,
          source: 'b',
        },
      ]);
      for (let i = 0; i < 31; i++)
        store.addObservation(u, 'GET', obs(new Date(Date.UTC(2026, 10, 4, 0, i)).toISOString(), null));
      // The newest has a price no 64-bit integer holds: it must come back the same from every path.
      store.addObservation(u, 'GET', {
        ...obs('2026-11-04T00:31:00.000Z', null),
        price_usd: 1.157920892373162e71,
      });
      const both = async () => ({
        listing: await store.listing(u, 'GET'),
        observations: await store.observations(u, 'GET'),
      });
      // Queued, then written to the table, then with a newer observation still queued.
      const queued = await store.endpoint(u, 'GET');
      expect(queued).toEqual(await both());
      expect(queued.listing).toMatchObject({ source: 'b', priceUsd: 0.01 });
      expect(queued.observations).toHaveLength(30);
      expect(queued.observations[0]).toMatchObject({
        observed_at: '2026-11-04T00:31:00.000Z',
        price_usd: 1.157920892373162e71,
      });
      await store.flush();
      expect(await store.endpoint(u, 'GET')).toEqual(queued);
      store.addObservation(
        u,
        'GET',
        obs('2026-11-05T00:00:00.000Z', '0x2222222222222222222222222222222222222222'),
      );
      const later = await store.endpoint(u, 'GET');
      expect(later).toEqual(await both());
      expect(later.observations[0]?.pay_to).toBe('0x2222222222222222222222222222222222222222');
      expect((await store.endpoint(u, 'POST')).listing).toMatchObject({ source: 'a', priceUsd: 0.01 });
    });

    const paid = (url: string, minute: number, task = 'fx-rate') =>
      paidCallRecord({
        endpoint_url: url,
        task,
        called_at: new Date(Date.UTC(2026, 10, 1, 0, minute)).toISOString(),
        price_atomic: '10000',
        network: 'eip155:8453',
        pay_to: '0x1111111111111111111111111111111111111111',
        settlement_tx: minute % 2 === 0 ? `0x${String(minute).padStart(64, '0')}` : null,
        delivered: minute % 3 !== 0,
        known_answer: minute % 3 === 0 ? null : minute % 2 === 0 ? 'pass' : 'fail',
        http_status: minute % 3 === 0 ? 502 : 200,
      });

    it('keeps paid calls and answers the last n per service, newest first', async () => {
      expect(await store.paidCalls({ perService: 5 })).toEqual([]);
      const all = [
        ...[1, 2, 3, 4].map((m) => paid('https://a.example/fx', m)),
        ...[1, 2].map((m) => paid('https://b.example:8443/fx', m)),
        paid('https://b.example:8443/geo', 5, 'geocode'),
      ];
      for (const record of all) await store.addPaidCall(record);
      const two = [...(await store.paidCalls({ perService: 2 }))].sort(
        (a, b) => newestFirst(a, b) || a.service_id.localeCompare(b.service_id),
      );
      expect(two.map((r) => `${r.service_id} ${r.called_at.slice(14, 16)}`)).toEqual([
        'b.example:8443/geo 05',
        'a.example/fx 04',
        'a.example/fx 03',
        'b.example:8443/fx 02',
        'b.example:8443/fx 01',
      ]);
      expect(two[1]).toEqual(all[3]);
      expect(two[2]).toEqual(all[2]);
      expect(await store.paidCalls({ perService: 20 })).toHaveLength(7);
    });

    it('keeps a paid call once per receipt id, with its receipt id and why', async () => {
      const record = { ...paid('https://a.example/fx', 1), receipt_id: 'sc-one', why: 'value_differs' };
      await store.addPaidCall(record);
      await store.addPaidCall(record);
      await store.addPaidCall(paid('https://a.example/fx', 2));
      const calls = await store.paidCalls({ perService: 20 });
      expect(calls).toHaveLength(2);
      expect(calls[1]).toEqual(record);
    });

    it('answers a query asked before a paid call was added with that call after it', async () => {
      await store.addPaidCall(paid('https://a.example/fx', 1));
      const query = { task: 'fx-rate', perService: 5 };
      const before = await store.paidCalls(query);
      expect(await store.paidCalls(query)).toEqual(before);
      await store.addPaidCall(paid('https://a.example/fx', 2));
      await store.addPaidCall(paid('https://c.example/fx', 3));
      const after = await store.paidCalls(query);
      expect(after.map((r) => r.called_at.slice(14, 16)).sort()).toEqual(['01', '02', '03']);
      expect(before.map((r) => r.called_at.slice(14, 16))).toEqual(['01']);
    });

    it('filters paid calls by task, service id or URL, and host', async () => {
      for (const m of [1, 2, 3]) await store.addPaidCall(paid('https://a.example/fx', m));
      await store.addPaidCall(paid('https://b.example:8443/fx', 4));
      await store.addPaidCall(paid('https://b.example:8443/geo', 5, 'geocode'));
      const services = async (query: Parameters<Store['paidCalls']>[0]) => [
        ...new Set((await store.paidCalls(query)).map((r) => r.service_id)),
      ];
      expect(await services({ task: 'geocode', perService: 5 })).toEqual(['b.example:8443/geo']);
      expect(await services({ endpoint: 'a.example/fx', perService: 5 })).toEqual(['a.example/fx']);
      expect(await services({ endpoint: 'https://b.example:8443/fx', perService: 5 })).toEqual([
        'b.example:8443/fx',
      ]);
      expect((await services({ host: 'b.example:8443', perService: 5 })).sort()).toEqual([
        'b.example:8443/fx',
        'b.example:8443/geo',
      ]);
      expect(await services({ host: 'b.example', perService: 5 })).toEqual([]);
      expect(await services({ task: 'fx-rate', host: 'a.example', perService: 1 })).toEqual(['a.example/fx']);
      expect(await store.paidCalls({ task: 'fx-rate', host: 'a.example', perService: 1 })).toHaveLength(1);
    });

    it('answers the observations of every endpoint of a host, newest first', async () => {
      expect(await store.observationsByHost('a.example', 10)).toEqual([]);
      store.addObservation('https://a.example/x', 'GET', obs('2026-11-01T00:01:00.000Z', '0xa'));
      store.addObservation('https://a.example/y?q=1', 'POST', obs('2026-11-01T00:02:00.000Z', '0xb'));
      store.addObservation('https://a.example', 'GET', obs('2026-11-01T00:03:00.000Z', null));
      store.addObservation('https://a.example:8443/x', 'GET', obs('2026-11-01T00:04:00.000Z', '0xc'));
      store.addObservation('https://a.example.evil/x', 'GET', obs('2026-11-01T00:05:00.000Z', '0xd'));
      store.addObservation('https://b.example/a.example', 'GET', obs('2026-11-01T00:06:00.000Z', '0xe'));
      const list = await store.observationsByHost('a.example', 10);
      expect(list.map((o) => `${o.endpoint} ${o.pay_to}`)).toEqual([
        'GET https://a.example null',
        'POST https://a.example/y?q=1 0xb',
        'GET https://a.example/x 0xa',
      ]);
      expect(list[1]).toEqual({
        ...obs('2026-11-01T00:02:00.000Z', '0xb'),
        endpoint: 'POST https://a.example/y?q=1',
      });
      expect(await store.observationsByHost('a.example', 2)).toHaveLength(2);
      expect((await store.observationsByHost('a.example:8443', 10)).map((o) => o.pay_to)).toEqual(['0xc']);
    });

    it('keeps at most 30 observations per endpoint in the host view', async () => {
      for (let i = 0; i < 35; i++) {
        store.addObservation(
          'https://a.example/x',
          'GET',
          obs(new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString(), null),
        );
      }
      store.addObservation('https://a.example/y', 'GET', obs('2026-10-01T00:00:00.000Z', null));
      const list = await store.observationsByHost('a.example', 100);
      expect(list).toHaveLength(31);
      expect(list.at(-1)?.endpoint).toBe('GET https://a.example/y');
    });

    it('answers the check receipts of a host with where the expectation came from', async () => {
      store.indexReceipts([
        row('sc-1', '2026-11-01T00:00:00.000Z', { body: { expected_source: 'listing' } }),
        row('sc-2', '2026-11-02T00:00:00.000Z', {
          verdict: 'skip',
          reason: 'pay_to_mismatch',
          body: { expected_source: 'request' },
        }),
        row('sc-3', '2026-11-03T00:00:00.000Z', { urlNorm: 'https://a.example:8443/x', body: {} }),
        row('ps-1', '2026-11-04T00:00:00.000Z', { type: 'payment-status', verdict: null, reason: null }),
      ]);
      expect(await store.checksByHost('a.example', 10)).toEqual([
        {
          verdict: 'skip',
          reason: 'pay_to_mismatch',
          at: '2026-11-02T00:00:00.000Z',
          expected_source: 'request',
        },
        { verdict: 'pay', reason: 'price_ok', at: '2026-11-01T00:00:00.000Z', expected_source: 'listing' },
      ]);
      expect(await store.checksByHost('a.example', 1)).toHaveLength(1);
      expect(await store.checksByHost('a.example:8443', 10)).toEqual([
        { verdict: 'pay', reason: 'price_ok', at: '2026-11-03T00:00:00.000Z', expected_source: null },
      ]);
      expect(await store.checksByHost('nobody.example', 10)).toEqual([]);
    });

    it("answers a host's public-state receipts, newest first, for the badge", async () => {
      const live = (id: string) => ({ id, type: 'check', mode: 'live', expected_source: 'listing' });
      store.indexReceipts([
        row('sc-1', '2026-11-01T00:00:00.000Z', { body: live('sc-1') }),
        row('sc-2', '2026-11-02T00:00:00.000Z', { body: { ...live('sc-2'), mode: 'dry-run' } }),
        row('sc-3', '2026-11-03T00:00:00.000Z', { body: { ...live('sc-3'), expected_source: 'request' } }),
        row('sc-4', '2026-11-04T00:00:00.000Z', { body: live('sc-4') }),
        row('sc-5', '2026-11-05T00:00:00.000Z', {
          url: 'https://a.example:8443/x',
          urlNorm: 'https://a.example:8443/x',
          body: live('sc-5'),
        }),
        row('ps-1', '2026-11-06T00:00:00.000Z', { type: 'payment-status', verdict: null, reason: null }),
      ]);
      expect(await store.publicChecksByHost('a.example', 10)).toEqual([live('sc-4'), live('sc-1')]);
      expect(await store.publicChecksByHost('a.example', 1)).toEqual([live('sc-4')]);
      expect(await store.publicChecksByHost('a.example:8443', 10)).toEqual([live('sc-5')]);
      expect(await store.publicChecksByHost('nobody.example', 10)).toEqual([]);
    });

    it("answers for a host's badge only receipts in their endpoint's form: the listed one, else that of its newest pay", async () => {
      const live = (id: string) => ({ id, type: 'check', mode: 'live', expected_source: null });
      const at = (i: number) => new Date(Date.UTC(2026, 10, 1, i)).toISOString();
      const r = (id: string, i: number, url: string, method: 'GET' | 'POST', verdict: 'pay' | 'skip') =>
        row(id, at(i), { url, urlNorm: normalizeUrl(url), method, verdict, body: live(id) });
      await store.importListings([
        {
          urlNorm: 'https://f.example/listed',
          url: 'https://f.example/listed/',
          method: 'POST',
          priceUsd: null,
          network: null,
          asset: null,
          payTo: null,
          source: 'a',
        },
      ]);
      store.indexReceipts([
        r('sc-x', 1, 'https://f.example/x', 'GET', 'pay'),
        r('sc-post-only', 2, 'https://f.example/p', 'POST', 'pay'),
        r('sc-slash-canonical', 3, 'https://f.example/s/', 'GET', 'pay'),
        r('sc-listed', 4, 'https://f.example/listed/', 'POST', 'skip'),
        // Variants of each, newer, answered 404: a trailing slash, another method, the slash dropped.
        r('sc-x-slash', 5, 'https://f.example/x/', 'GET', 'skip'),
        r('sc-x-post', 6, 'https://f.example/x', 'POST', 'skip'),
        r('sc-p-get', 7, 'https://f.example/p', 'GET', 'skip'),
        r('sc-s-plain', 8, 'https://f.example/s', 'GET', 'skip'),
        r('sc-listed-get', 9, 'https://f.example/listed', 'GET', 'pay'),
        // A URL never seen paying says nothing about the host: a stranger's check of any path would grey it.
        r('sc-nothing', 10, 'https://f.example/nothing', 'GET', 'skip'),
        r('sc-root', 11, 'https://f.example/', 'GET', 'pay'),
        // A later check in the endpoint's own form counts, whatever it finds (the seller broke).
        r('sc-x-later', 12, 'https://f.example/x', 'GET', 'skip'),
      ]);
      expect((await store.publicChecksByHost('f.example', 20)).map((b) => b.id)).toEqual([
        'sc-x-later',
        'sc-root',
        'sc-listed',
        'sc-slash-canonical',
        'sc-post-only',
        'sc-x',
      ]);
      expect((await store.publicChecksByHost('f.example', 2)).map((b) => b.id)).toEqual([
        'sc-x-later',
        'sc-root',
      ]);
    });

    it("answers a host's receipts from its host column, never reading another host's rows", async () => {
      // Rows of other hosts count every field read once indexed: a query by host that scans them reads them.
      let reads = 0;
      const watched = (r: ReceiptRow) =>
        new Proxy(r, {
          get(target, key, receiver) {
            reads++;
            return Reflect.get(target, key, receiver);
          },
        });
      const live = (id: string) => ({ id, type: 'check', mode: 'live', expected_source: 'listing' });
      const others = Array.from({ length: 50 }, (_, i) =>
        watched(
          row(`sc-b${i}`, '2026-11-02T00:00:00.000Z', {
            url: `https://b${i % 5}.example/a.example`,
            urlNorm: `https://b${i % 5}.example/a.example`,
            body: live(`sc-b${i}`),
          }),
        ),
      );
      store.indexReceipts([
        row('sc-a1', '2026-11-01T00:00:00.000Z', { body: live('sc-a1') }),
        row('sc-a2', '2026-11-03T00:00:00.000Z', {
          url: 'https://a.example/x',
          urlNorm: 'https://a.example/x',
          body: live('sc-a2'),
        }),
        ...others,
      ]);
      await store.flush();
      reads = 0;
      expect((await store.checksByHost('a.example', 10)).map((c) => c.at)).toEqual([
        '2026-11-03T00:00:00.000Z',
        '2026-11-01T00:00:00.000Z',
      ]);
      expect((await store.publicChecksByHost('a.example', 10)).map((b) => b.id)).toEqual(['sc-a2', 'sc-a1']);
      expect(reads).toBe(0);
      expect(await store.checksByHost('b3.example', 100)).toHaveLength(10);
    });
  });
}
