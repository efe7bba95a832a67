import { describe, expect, it } from 'vitest';
import {
  type PaidCallRecord,
  type paidCallRecord,
  rankServices,
  serviceIdOf,
} from '../../../core/catalog.ts';
import { BASE, SOLANA } from '../../../core/networks.ts';
import { paidCallAt } from '../../helpers/paid-calls.ts';

const PAY_TO = '0x1111111111111111111111111111111111111111';

/** A call to `https://<host>/run`, `minute` minutes into the day, passing by default. */
const call = (host: string, minute: number, extra: Partial<Parameters<typeof paidCallRecord>[0]> = {}) =>
  paidCallAt(host, new Date(Date.UTC(2026, 10, 1, 0, minute)), minute, extra);
const rank = (records: PaidCallRecord[], options: Partial<Parameters<typeof rankServices>[1]> = {}) =>
  rankServices(records, { task: null, maxPriceUsd: null, n: 5, limit: 10, ...options });
const ids = (entries: Array<{ service_id: string }>) => entries.map((entry) => entry.service_id);

describe('serviceIdOf', () => {
  it('is the normalized URL without its scheme', () => {
    expect(serviceIdOf('HTTPS://API.Example:443/v1/fx/?b=1&a=2#x')).toBe('api.example/v1/fx?a=2&b=1');
    expect(serviceIdOf('http://a.example:8080')).toBe('a.example:8080');
  });
});

describe('paidCallRecord', () => {
  it('normalizes the URL, derives the service id and the seller-side flag', () => {
    const record = call('A.example', 1);
    expect(record.endpoint_url).toBe('https://a.example/run');
    expect(record.service_id).toBe('a.example/run');
    expect(record.broken_on_seller_side).toBe(false);
    expect(call('a.example', 1, { http_status: 503, delivered: false }).broken_on_seller_side).toBe(true);
    expect(call('a.example', 1, { http_status: null, delivered: false }).broken_on_seller_side).toBe(true);
    expect(
      call('a.example', 1, { delivered: false, broken_on_seller_side: false }).broken_on_seller_side,
    ).toBe(false);
  });

  it('refuses amounts that are not atomic and times that are not dates', () => {
    expect(() => call('a.example', 1, { price_atomic: '0.01' })).toThrow(RangeError);
    expect(() => call('a.example', 1, { called_at: 'yesterday' })).toThrow(RangeError);
  });
});

describe('rankServices', () => {
  it('sorts by pass rate, then price, then service id', () => {
    const records = [
      // b: 2/2 at 0.02; a: 2/2 at 0.02; c: 2/2 at 0.01; d: 1/2 at 0.001; e: no checked answer at 0.0001
      call('b.example', 1, { price_atomic: '20000' }),
      call('b.example', 2, { price_atomic: '20000' }),
      call('a.example', 1, { price_atomic: '20000' }),
      call('a.example', 2, { price_atomic: '20000' }),
      call('c.example', 1),
      call('c.example', 2),
      call('d.example', 1, { price_atomic: '1000' }),
      call('d.example', 2, { price_atomic: '1000', known_answer: 'fail' }),
      call('e.example', 1, { price_atomic: '100', known_answer: null }),
    ];
    const { results, facts_only } = rank(records);
    expect(ids(results)).toEqual([
      'c.example/run',
      'a.example/run',
      'b.example/run',
      'd.example/run',
      'e.example/run',
    ]);
    expect(facts_only).toEqual([]);
    expect(results[3]).toMatchObject({ known_answer_calls: 2, known_answer_passes: 1, pass_rate: 0.5 });
    expect(results[4]).toMatchObject({ known_answer_calls: 0, pass_rate: null });
  });

  it('compares pass rates exactly (2/3 above 3/5)', () => {
    const a = [1, 2, 3].map((m) => call('a.example', m, { known_answer: m === 3 ? 'fail' : 'pass' }));
    const b = [1, 2, 3, 4, 5].map((m) =>
      call('b.example', m, { known_answer: m > 3 ? 'fail' : 'pass', price_atomic: '1' }),
    );
    expect(ids(rank([...b, ...a]).results)).toEqual(['a.example/run', 'b.example/run']);
  });

  it('reads only the last n calls of each service', () => {
    const records = [
      call('a.example', 1, { known_answer: 'fail' }),
      call('a.example', 2, { known_answer: 'fail' }),
      call('a.example', 3),
      call('a.example', 4),
      call('b.example', 1, { price_atomic: '20000' }),
      call('b.example', 2, { price_atomic: '20000' }),
    ];
    const two = rank(records, { n: 2 });
    expect(ids(two.results)).toEqual(['a.example/run', 'b.example/run']);
    expect(two.results[0]).toMatchObject({
      calls: 2,
      pass_rate: 1,
      last_called_at: '2026-11-01T00:04:00.000Z',
    });
    expect(two.results[0]?.receipts.map((r) => r.called_at)).toEqual([
      '2026-11-01T00:04:00.000Z',
      '2026-11-01T00:03:00.000Z',
    ]);
    const four = rank(records, { n: 4 });
    expect(ids(four.results)).toEqual(['b.example/run', 'a.example/run']);
  });

  it('shows the newest terms and facts of each service', () => {
    const records = [
      call('a.example', 1, { price_atomic: '50000' }),
      call('a.example', 2, { price_atomic: '10000' }),
    ];
    expect(rank(records).results[0]).toEqual({
      service_id: 'a.example/run',
      endpoint: 'https://a.example/run',
      task: 'fx-rate',
      network: BASE,
      pay_to: PAY_TO,
      price_atomic: '10000',
      price_usd: 0.01,
      calls: 2,
      delivered: 2,
      delivered_rate: 1,
      known_answer_calls: 2,
      known_answer_passes: 2,
      pass_rate: 1,
      seller_side_failures: 0,
      last_called_at: '2026-11-01T00:02:00.000Z',
      last_settlement_tx: `0x${'2'.padStart(64, '0')}`,
      receipts: [
        expect.objectContaining({
          called_at: '2026-11-01T00:02:00.000Z',
          delivered: true,
          known_answer: 'pass',
        }),
        expect.objectContaining({ called_at: '2026-11-01T00:01:00.000Z', http_status: 200 }),
      ],
    });
  });

  it('filters by task and by maximum price, the boundary included', () => {
    const records = [
      call('a.example', 1, { price_atomic: '20000' }),
      call('b.example', 1, { price_atomic: '20001' }),
      call('c.example', 1, { task: 'geocode', price_atomic: '1' }),
    ];
    expect(ids(rank(records, { maxPriceUsd: '0.02' }).results)).toEqual(['c.example/run', 'a.example/run']);
    expect(ids(rank(records, { task: 'fx-rate', maxPriceUsd: '0.02' }).results)).toEqual(['a.example/run']);
    expect(ids(rank(records, { maxPriceUsd: '0' }).results)).toEqual([]);
  });

  it('leaves services in unknown units out of a price filter and last in price order', () => {
    const records = [
      call('a.example', 1, { network: 'eip155:999999' }),
      call('b.example', 1, { price_atomic: '900000' }),
    ];
    expect(ids(rank(records).results)).toEqual(['b.example/run', 'a.example/run']);
    expect(rank(records).results[1]?.price_usd).toBeNull();
    expect(ids(rank(records, { maxPriceUsd: '100' }).results)).toEqual(['b.example/run']);
  });

  it('compares prices across networks exactly', () => {
    // Both USDC with 6 decimals: Solana 0.005 is below Base 0.01.
    const records = [call('a.example', 1), call('b.example', 1, { network: SOLANA, price_atomic: '5000' })];
    expect(ids(rank(records).results)).toEqual(['b.example/run', 'a.example/run']);
  });

  it('puts services broken on the seller side in facts_only, by id, over the last n calls', () => {
    const broken = { delivered: false, http_status: 500, known_answer: null } as const;
    const records = [
      call('z.example', 1, broken),
      call('z.example', 2, broken),
      call('z.example', 3),
      call('y.example', 1, { ...broken, http_status: null }),
      call('x.example', 1, broken),
      call('x.example', 2),
      call('w.example', 1, broken),
      call('w.example', 2),
      call('w.example', 3),
    ];
    const { results, facts_only } = rank(records);
    // x is at exactly half: not a majority.
    expect(ids(results)).toEqual(['w.example/run', 'x.example/run']);
    expect(ids(facts_only)).toEqual(['y.example/run', 'z.example/run']);
    expect(facts_only[1]).toMatchObject({ seller_side_failures: 2, calls: 3, delivered: 1 });
    // Over its last call only, z is healthy again.
    expect(ids(rank(records, { n: 1 }).facts_only)).toEqual(['y.example/run']);
  });

  it('cuts each list to limit', () => {
    const records = ['a', 'b', 'c'].flatMap((h) => [
      call(`${h}.example`, 1),
      call(`${h}x.example`, 1, { delivered: false }),
    ]);
    const { results, facts_only } = rank(records, { limit: 2 });
    expect(ids(results)).toEqual(['a.example/run', 'b.example/run']);
    expect(ids(facts_only)).toEqual(['ax.example/run', 'bx.example/run']);
  });

  it('is stable under input order', () => {
    const records = [call('a.example', 1), call('b.example', 1), call('c.example', 2), call('a.example', 3)];
    const forward = rank(records);
    expect(rank([...records].reverse())).toEqual(forward);
  });

  it('answers one records array asked again with other filters, cuts and n as if asked first', () => {
    const records = [
      call('a.example', 1, { price_atomic: '30000' }),
      call('a.example', 2, { price_atomic: '30000', known_answer: 'fail' }),
      call('b.example', 1, { price_atomic: '10000' }),
      call('c.example', 1, { price_atomic: '20000', task: 'geocode' }),
    ];
    const asks: Array<Partial<Parameters<typeof rankServices>[1]>> = [
      {},
      { maxPriceUsd: '0.02' },
      { limit: 1 },
      { n: 1 },
      { task: 'geocode' },
      { task: 'fx-rate', maxPriceUsd: '0.01' },
    ];
    // Asked on one array in turn (what a store answering the same array sees), and each on a fresh copy.
    const shared = asks.map((options) => rank(records, options));
    expect(shared).toEqual(asks.map((options) => rank([...records], options)));
    expect(ids(shared[1]!.results)).toEqual(['b.example/run', 'c.example/run']);
    expect(ids(shared[3]!.results)).toEqual(['b.example/run', 'c.example/run', 'a.example/run']);
    expect(ids(shared[4]!.results)).toEqual(['c.example/run']);
    // An empty task name is a task no call has, not "every task".
    expect(ids(rank(records, { task: '' }).results)).toEqual([]);
  });
});
