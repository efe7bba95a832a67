/**
 * The lookup and task routes through `app.fetch` with the memory store, the real quota and access gate, the real
 * `createSales` wrapper and a fake seller at the x402 seam (a payment header of `good` verifies; anything else is
 * refused): ordering, filters, `facts_only`, every 400 code, the free quota, paid and exempt access.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../api/app.ts';
import type { AppDeps } from '../../../api/deps.ts';
import { createIdentity } from '../../../api/identity.ts';
import { createReputationLookup } from '../../../api/reputation-lookup.ts';
import { TASKS } from '../../../api/routes/tasks.ts';
import { createSales } from '../../../api/sales.ts';
import type { Seller } from '../../../api/x402/seller.ts';
import type { paidCallRecord } from '../../../core/catalog.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { parseCidrList } from '../../../core/ssrf.ts';
import { createProbeCache } from '../../../io/probe/probe-cache.ts';
import { createQuota, quotaPort } from '../../../io/quota/memory.ts';
import { runPaths } from '../../../io/runs/paths.ts';
import { createMemoryStore } from '../../../io/store/memory.ts';
import type { Store } from '../../../io/store/port.ts';
import { paidCallAt } from '../../helpers/paid-calls.ts';
import { fromPeer } from '../../helpers/service.ts';

const NOW = new Date('2026-11-30T12:00:00.000Z');
const PARTNER = 'partner-secret-key-0123456789';
const unused = async (): Promise<never> => {
  throw new Error('not used by lookups');
};

function setup(options: { store?: Store } = {}) {
  const store = options.store ?? createMemoryStore();
  const settled: string[] = [];
  const attached: unknown[] = [];
  const seller: Seller = {
    async paymentRequired(offer, init = {}) {
      return Response.json(
        { x402Version: 2, error: init.error, resource: { url: offer.resourceUrl } },
        { status: 402, headers: { 'payment-required': 'challenge', ...init.headers } },
      );
    },
    async sell(event, offer, handler) {
      if (event.req.headers.get('payment-signature') !== 'good') {
        return Response.json({ x402Version: 2, error: 'Payment required' }, { status: 402 });
      }
      const answer = await handler({
        payer: '0xbuyer',
        network: BASE,
        amountAtomic: offer.priceAtomic,
        x402Version: 2,
      });
      // Like the real seller: an error answer is returned as is and nothing is settled.
      if (answer instanceof Response) return answer;
      settled.push(offer.route);
      const settlement = {
        tx: '0xfeed',
        payer: '0xbuyer',
        network: BASE,
        amountAtomic: '20000',
        chargedUsd: '0.02',
      };
      return Response.json(await answer.render(settlement), {
        status: answer.status,
        headers: { 'payment-response': 'settled' },
      });
    },
  };
  const deps: AppDeps = {
    prober: { probe: unused },
    probeCache: createProbeCache({ ttlMs: 1000, maxEntries: 10, now: () => NOW.getTime() }),
    store,
    ledger: {
      issue: unused,
      get: unused,
      recover: unused,
      flushFiles: unused,
      checkpoint: unused,
      attach: async (value) => {
        attached.push(value);
      },
    },
    now: () => NOW,
    random: (n) => new Uint8Array(n),
    baseUrl: 'https://spotcheck.example',
    gate: {
      trustProxy: true,
      trustedProxies: parseCidrList('127.0.0.1/8,::1'),
      exemptKeys: [{ name: 'partner', secret: PARTNER }],
      quota: quotaPort(createQuota({ now: () => NOW })),
      identity: createIdentity(new Uint8Array(32).fill(7)),
    },
    sales: createSales(seller, 'https://spotcheck.example'),
    jwks: async () => ({ keys: [] }),
    reputation: async () => null,
    chain: null,
    runs: { crawl: runPaths('/nonexistent', 'crawl'), bazaar: runPaths('/nonexistent', 'bazaar') },
    hosted: null,
  };
  const app = createApp(deps);
  const get = (path: string, headers: Record<string, string> = {}) =>
    app.fetch(
      fromPeer(
        new Request(`http://spotcheck.test${path}`, {
          headers: { 'x-forwarded-for': '198.51.100.7', ...headers },
        }),
      ),
    );
  return { app, store, settled, attached, get };
}

type Entry = { service_id: string; pass_rate: number | null; price_atomic: string; calls: number };
type LookupBody = { results: Entry[]; facts_only: Entry[]; access: Record<string, unknown> };
const ids = (entries: Entry[]) => entries.map((entry) => entry.service_id);

const call = (host: string, minute: number, extra: Partial<Parameters<typeof paidCallRecord>[0]> = {}) =>
  paidCallAt(host, new Date(NOW.getTime() - 3_600_000 + minute * 60_000), minute, extra);

/** cheap: 1/2 at 0.001; best: 2/2 at 0.02; twin: 2/2 at 0.01; down: 5xx twice; geo: another task. */
async function seed(store: Store) {
  const records = [
    call('cheap.example', 1, { price_atomic: '1000', known_answer: 'fail' }),
    call('cheap.example', 2, { price_atomic: '1000' }),
    call('best.example', 1, { price_atomic: '20000' }),
    call('best.example', 2, { price_atomic: '20000' }),
    call('twin.example', 1),
    call('twin.example', 2),
    call('down.example', 1, { delivered: false, http_status: 503, known_answer: null }),
    call('down.example', 2, { delivered: false, http_status: 500, known_answer: null }),
    call('geo.example', 1, { task: 'geocode' }),
  ];
  for (const record of records) await store.addPaidCall(record);
}

describe('GET /v1/tasks', () => {
  it('lists the catalog without the known answers', async () => {
    const { get } = setup();
    const res = await get('/v1/tasks');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tasks: Array<Record<string, unknown>> };
    expect(body.tasks.map((task) => task.name)).toEqual(TASKS.map((task) => task.name));
    expect(body.tasks.length).toBeGreaterThanOrEqual(8);
    for (const task of body.tasks) {
      expect(Object.keys(task)).toEqual(
        expect.arrayContaining(['name', 'description', 'request', 'candidates']),
      );
    }
    expect(JSON.stringify(body)).not.toContain('answer_check');
    // How inputs are drawn and the checks stay out; the request shows where the fresh inputs go.
    for (const task of body.tasks) {
      expect(task).not.toHaveProperty('inputs');
      expect(task).not.toHaveProperty('answer');
    }
    expect(JSON.stringify(body.tasks.find((task) => task.name === 'hash-sha256')?.request)).toContain(
      '{text}',
    );
  });
});

describe('GET /v1/lookup', () => {
  it('ranks by pass rate, then price, and sets broken services apart', async () => {
    const { get, store } = setup();
    await seed(store);
    const res = await get('/v1/lookup?task=fx-rate');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as LookupBody;
    expect(ids(body.results)).toEqual(['twin.example/run', 'best.example/run', 'cheap.example/run']);
    expect(ids(body.facts_only)).toEqual(['down.example/run']);
    expect(body.results[2]).toMatchObject({ pass_rate: 0.5, price_atomic: '1000', calls: 2 });
    expect(body.access).toEqual({ tier: 'free', free_per_day: 5, free_used_today: 1 });
  });

  it('filters by max_price, endpoint, n and limit', async () => {
    const { get, store } = setup();
    await seed(store);
    const lookup = async (query: string) => (await (await get(`/v1/lookup?${query}`)).json()) as LookupBody;
    expect(ids((await lookup('task=fx-rate&max_price=0.01')).results)).toEqual([
      'twin.example/run',
      'cheap.example/run',
    ]);
    expect(ids((await lookup('max_price=0.001')).results)).toEqual(['cheap.example/run']);
    expect(
      ids((await lookup(`endpoint=${encodeURIComponent('https://BEST.example/run/')}`)).results),
    ).toEqual(['best.example/run']);
    const byId = await lookup('endpoint=down.example/run');
    expect([ids(byId.results), ids(byId.facts_only)]).toEqual([[], ['down.example/run']]);
    // Over the last call only, cheap passed: it leads on price.
    const { get: again, store: fresh } = setup();
    await seed(fresh);
    const one = (await (await again('/v1/lookup?task=fx-rate&n=1&limit=2')).json()) as LookupBody;
    expect(ids(one.results)).toEqual(['cheap.example/run', 'twin.example/run']);
    expect(one.results[0]?.calls).toBe(1);
  });

  it('answers an empty catalog with empty lists', async () => {
    const { get } = setup();
    const body = (await (await get('/v1/lookup?task=geocode')).json()) as LookupBody;
    expect(body).toEqual({
      results: [],
      facts_only: [],
      access: { tier: 'free', free_per_day: 5, free_used_today: 1 },
    });
  });

  it.each([
    ['task=Fx%20Rate', 'bad_task'],
    ['task=weather-on-mars', 'unknown_task'],
    ['max_price=-0.01', 'bad_max_price'],
    ['max_price=free', 'bad_max_price'],
    ['n=0', 'bad_n'],
    ['n=21', 'bad_n'],
    ['limit=0', 'bad_limit'],
    ['limit=abc', 'bad_limit'],
    ['endpoint=ftp%3A%2F%2Fa.example', 'bad_endpoint'],
    ['endpoint=has%20space', 'bad_endpoint'],
    [`client=${'c'.repeat(65)}`, 'bad_client'],
    ['ref=a%20b', 'bad_ref'],
    ['payer=0x12', 'bad_payer'],
    ['task=fx-rate&task=geocode', 'duplicate_parameter'],
  ])('?%s → 400 %s', async (query, code) => {
    const { get } = setup();
    const res = await get(`/v1/lookup?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code, message: expect.any(String) } });
  });

  it('gives 5 free lookups per client per UTC day, then 402; 400s are never metered', async () => {
    const { get } = setup();
    for (let i = 0; i < 10; i++) expect((await get('/v1/lookup?n=99')).status).toBe(400);
    for (let i = 1; i <= 5; i++) {
      const body = (await (await get('/v1/lookup?task=fx-rate')).json()) as LookupBody;
      expect(body.access.free_used_today).toBe(i);
    }
    const refused = await get('/v1/lookup?task=fx-rate');
    expect(refused.status).toBe(402);
    expect(refused.headers.get('payment-required')).toBe('challenge');
    expect(((await refused.json()) as { error: string }).error).toMatch(/Free lookups/);
    // A bad request still gets its 400, not a 402.
    expect((await get('/v1/lookup?n=0')).status).toBe(400);
    // Another client has its own quota.
    const other = await get('/v1/lookup?task=fx-rate', { 'x-forwarded-for': '203.0.113.9' });
    expect(((await other.json()) as LookupBody).access.free_used_today).toBe(1);
  });

  it('gives the quota unit back when the lookup fails', async () => {
    const memory = createMemoryStore();
    let fail = true;
    const store: Store = {
      ...memory,
      async paidCalls(query) {
        if (fail) throw new Error('store down');
        return memory.paidCalls(query);
      },
    };
    const { get } = setup({ store });
    expect((await get('/v1/lookup?task=fx-rate')).status).toBe(500);
    fail = false;
    const body = (await (await get('/v1/lookup?task=fx-rate')).json()) as LookupBody;
    expect(body.access.free_used_today).toBe(1);
  });

  it('takes a paid lookup through x402 without using the free quota', async () => {
    const { get, store, settled } = setup();
    await seed(store);
    const free = (await (await get('/v1/lookup?task=fx-rate')).json()) as LookupBody;
    const res = await get('/v1/lookup?task=fx-rate', { 'payment-signature': 'good' });
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-response')).toBe('settled');
    const paid = (await res.json()) as LookupBody;
    expect(paid.access).toEqual({ tier: 'paid', charged_usd: '0.02', tx: '0xfeed' });
    // docs/api.md §1: payment never changes results.
    expect({ ...paid, access: null }).toEqual({ ...free, access: null });
    expect(settled).toEqual(['GET /v1/lookup/paid']);
    const after = (await (await get('/v1/lookup?task=fx-rate')).json()) as LookupBody;
    expect(after.access.free_used_today).toBe(2);
    // A refused payment is a 402, never a free answer.
    expect((await get('/v1/lookup?task=fx-rate', { 'payment-signature': 'forged' })).status).toBe(402);
  });

  it('answers exempt keys without quota and refuses bad keys', async () => {
    const { get, store } = setup();
    await seed(store);
    const res = await get('/v1/lookup?task=fx-rate', { 'x-service-key': PARTNER });
    const body = (await res.json()) as LookupBody;
    expect(body.access).toEqual({ tier: 'exempt' });
    expect(ids(body.results)).toHaveLength(3);
    expect((await get('/v1/lookup?task=fx-rate', { 'x-service-key': 'wrong' })).status).toBe(401);
    const free = (await (await get('/v1/lookup?task=fx-rate')).json()) as LookupBody;
    expect(free.access.free_used_today).toBe(1);
  });
});

describe('GET /v1/lookup/paid', () => {
  it('asks for payment first, even with bad parameters', async () => {
    const { get, settled } = setup();
    for (const query of ['task=fx-rate', '', 'n=0']) {
      expect((await get(`/v1/lookup/paid?${query}`)).status).toBe(402);
    }
    expect(settled).toEqual([]);
  });

  it.each([
    ['', 'missing_task_or_endpoint'],
    ['max_price=0.05&n=3', 'missing_task_or_endpoint'],
    ['task=unknown-task', 'unknown_task'],
    ['task=fx-rate&n=0', 'bad_n'],
    ['task=fx-rate&limit=21', 'bad_limit'],
    ['task=fx-rate&max_price=x', 'bad_max_price'],
    ['endpoint=%20', 'bad_endpoint'],
    ['task=fx-rate&payer=nope', 'bad_payer'],
    ['task=fx-rate&n=2&n=3', 'duplicate_parameter'],
  ])('checks ?%s after the 402 and settles nothing: 400 %s', async (query, code) => {
    const { get, settled } = setup();
    const res = await get(`/v1/lookup/paid?${query}`, { 'payment-signature': 'good' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    expect(settled).toEqual([]);
  });

  it('answers the same ranking as the free lookup, with paid access', async () => {
    const { get, store, settled } = setup();
    await seed(store);
    const res = await get('/v1/lookup/paid?task=fx-rate&max_price=0.05&n=5&limit=10', {
      'payment-signature': 'good',
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as LookupBody;
    expect(ids(body.results)).toEqual(['twin.example/run', 'best.example/run', 'cheap.example/run']);
    expect(ids(body.facts_only)).toEqual(['down.example/run']);
    expect(body.access).toEqual({ tier: 'paid', charged_usd: '0.02', tx: '0xfeed' });
    expect(settled).toEqual(['GET /v1/lookup/paid']);
    // The paid route never touches the free quota.
    const free = (await (await get('/v1/lookup?task=fx-rate')).json()) as LookupBody;
    expect(free.access.free_used_today).toBe(1);
  });

  it('finds a service by endpoint alone', async () => {
    const { get, store } = setup();
    await seed(store);
    const res = await get('/v1/lookup/paid?endpoint=geo.example/run', { 'payment-signature': 'good' });
    expect(ids(((await res.json()) as LookupBody).results)).toEqual(['geo.example/run']);
  });
});

describe('reputation over the store', () => {
  it("reads a host's observations, checks and paid calls from the memory store", async () => {
    const store = createMemoryStore();
    const lookup = createReputationLookup({ source: store, now: () => NOW });
    const at = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
    for (let i = 0; i < 6; i++) {
      store.addObservation(`https://best.example/run`, 'GET', {
        observed_at: at(i + 1),
        http_status: i === 0 ? null : 402,
        price_usd: i === 0 ? null : 0.02,
        amount_atomic: i === 0 ? null : '20000',
        network: i === 0 ? null : BASE,
        asset: i === 0 ? null : BASE_USDC,
        pay_to: i === 0 ? null : '0x1111111111111111111111111111111111111111',
      });
    }
    store.indexReceipts([
      {
        id: 'sc-1',
        type: 'check',
        issuedAt: at(1),
        url: 'https://best.example/run',
        urlNorm: 'https://best.example/run',
        method: 'GET',
        verdict: 'pay',
        reason: 'price_ok',
        checkType: 'dry-run',
        mode: 'live',
        tier: 'free',
        body: { expected_source: 'listing' },
      },
    ]);
    await seed(store);
    const result = await lookup({ url: 'https://best.example/other?x=1' });
    expect(result).toMatchObject({
      host: 'best.example',
      inputs: { observations: 6, endpoints: 1, checks: 1, checks_counted: 1, paid_calls: 2 },
      breakdown: { availability: { value: 0.8333 }, stability: { value: 1 }, honesty: { value: 1 } },
    });
    // 0.25·0.8333 + 0.2 + 0.25 + 0.15 + 0.15 over a total weight of 1.
    expect(result?.score).toBe(96);
    expect(await lookup({ url: 'https://nobody.example/' })).toMatchObject({
      score: null,
      provisional_score: null,
    });
  });
});

describe('lookup attribution (docs/api.md §4: client, ref, payer)', () => {
  const query =
    '/v1/lookup?task=fx-rate&client=my-agent&ref=campaign-7&payer=0x2222222222222222222222222222222222222222';
  it('journals who asked and whom they paid, per tier, and never changes the answer', async () => {
    const { get, attached: all } = setup();
    const attached = { lookups: () => all.filter((value) => Object.hasOwn(value as object, 'lookup')) };
    const plain = (await (await get('/v1/lookup?task=fx-rate')).json()) as LookupBody;
    expect(attached.lookups()).toEqual([]);
    const tagged = (await (await get(query)).json()) as LookupBody;
    expect({ ...tagged, access: null }).toEqual({ ...plain, access: null });
    await get(query, { 'x-service-key': PARTNER });
    await get(query.replace('/v1/lookup?', '/v1/lookup/paid?'), { 'payment-signature': 'good' });
    const record = {
      at: NOW.toISOString(),
      task: 'fx-rate',
      endpoint: null,
      client: 'my-agent',
      ref: 'campaign-7',
      payer: '0x2222222222222222222222222222222222222222',
    };
    expect(attached.lookups()).toEqual([
      { lookup: { ...record, tier: 'free' } },
      { lookup: { ...record, tier: 'exempt' } },
      { lookup: { ...record, tier: 'paid' } },
    ]);
  });

  it('records nothing for a bad request or an unpaid one', async () => {
    const { get, attached } = setup();
    expect((await get(`${query}&n=99`)).status).toBe(400);
    expect((await get(query.replace('/v1/lookup?', '/v1/lookup/paid?'))).status).toBe(402);
    expect(attached).toEqual([]);
  });
});
