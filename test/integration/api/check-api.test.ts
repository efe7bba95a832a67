/**
 * The check route through `app.fetch` with the real journal, DuckDB and signing key, and a fake prober at the
 * injected seam: parameter validation, the free tier and its exact accounting, dry runs, exempt keys.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FREE_ANSWER_KEYS } from '../../fixtures/answers.ts';
import { PAY_TO } from '../../fixtures/challenge.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import {
  appFetch,
  EXEMPT_SECRET,
  SELF_SECRET,
  startTestService,
  type TestService,
} from '../../helpers/service.ts';

const prober = fakeProber();

let running: TestService[] = [];
async function start(dataDir?: string, now?: () => Date) {
  const spot = await startTestService(
    {},
    { prober, ...(now ? { now } : {}) },
    { listen: false, ...(dataDir ? { dataDir } : {}) },
  );
  running.push(spot);
  return spot;
}
afterEach(async () => {
  for (const spot of running) await spot.stop();
  running = [];
});

const check = (spot: TestService, query: string, init: RequestInit & { ip?: string } = {}) =>
  appFetch(spot.service, `/v1/products/endpoint-spot-check?${query}`, init);
const target = (n: number | string = 1) => `url=${encodeURIComponent(`https://seller.example/item/${n}`)}`;

describe('parameters', () => {
  const cases: Array<[string, string, number]> = [
    ['', 'missing_url', 400],
    ['url=', 'missing_url', 400],
    ['url=not-a-url', 'bad_url', 400],
    ['url=ftp%3A%2F%2Fseller.example%2Fx', 'bad_url', 400],
    ['url=javascript%3Aalert(1)', 'bad_url', 400],
    [`url=https%3A%2F%2F${'a'.repeat(2100)}.example`, 'bad_url', 400],
    [`${target()}&${target(2)}`, 'duplicate_parameter', 400],
    [`${target()}&method=PUT`, 'bad_method', 400],
    [`${target()}&method=get`, 'bad_method', 400],
    [`${target()}&claimed_price=-1`, 'bad_claimed_price', 400],
    [`${target()}&claimed_price=abc`, 'bad_claimed_price', 400],
    [`${target()}&claimed_price=NaN`, 'bad_claimed_price', 400],
    [`${target()}&claimed_price=1e400`, 'bad_claimed_price', 400],
    [`${target()}&pay_to=0x123`, 'bad_pay_to', 400],
    [`${target()}&pay_to=${'z'.repeat(80)}`, 'bad_pay_to', 400],
    [`${target()}&network=eip155`, 'bad_network', 400],
    [`${target()}&network=EIP155%3A8453%3Ax%3Ay`, 'bad_network', 400],
    [`${target()}&mode=fast`, 'bad_mode', 400],
    [`${target()}&check_expiry=yes`, 'bad_check_expiry', 400],
    [`${target()}&check_expiry=1&skew_s=301`, 'bad_skew_s', 400],
    [`${target()}&skew_s=-1`, 'bad_skew_s', 400],
    [`${target()}&skew_s=1.5`, 'bad_skew_s', 400],
    [`${target()}&client=${'c'.repeat(65)}`, 'bad_client', 400],
    [`${target()}&ref=has%20space`, 'bad_ref', 400],
    [`${target()}&task=Weather%20Now`, 'bad_task', 400],
  ];
  it.each(cases)('GET ?%s → %s', async (query, code, status) => {
    const spot = await start();
    const res = await check(spot, query);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ error: { code, message: expect.any(String) } });
  });

  it('bad parameters are never metered', async () => {
    const spot = await start();
    for (let i = 0; i < 10; i++) expect((await check(spot, 'url=nope')).status).toBe(400);
    const ok = await check(spot, target());
    expect(((await ok.json()) as { access: { free_used_today: number } }).access.free_used_today).toBe(1);
  });

  const post = (spot: TestService, body: string, headers: Record<string, string> = {}) =>
    appFetch(spot.service, '/v1/products/endpoint-spot-check', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
  it.each([
    ['{', 'bad_body', 400],
    ['[1,2]', 'bad_body', 400],
    ['"url"', 'bad_body', 400],
    ['{"url": 42}', 'bad_url', 400],
    ['{"url": "https://seller.example/x", "claimed_price": "0.1.2"}', 'bad_claimed_price', 400],
    ['{"url": "https://seller.example/x", "skew_s": 400, "check_expiry": true}', 'bad_skew_s', 400],
    [JSON.stringify({ url: 'https://seller.example/x', pad: 'x'.repeat(70_000) }), 'body_too_large', 413],
  ])('POST %s → %s', async (body, code, status) => {
    const spot = await start();
    const res = await post(spot, body);
    expect(res.status).toBe(status);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
  });

  it('POST takes typed JSON members', async () => {
    const spot = await start();
    const res = await post(
      spot,
      JSON.stringify({
        url: 'https://seller.example/x',
        claimed_price: 0.01,
        pay_to: PAY_TO,
        check_expiry: true,
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ verdict: 'pay', reason_code: 'price_ok' });
  });
});

describe('the free tier', () => {
  it('gives exactly 5 answers and 95 402s to 100 parallel checks from one client', async () => {
    const spot = await start();
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => check(spot, target(i))));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(95);
    const paid = answers.find((res) => res.status === 402)!;
    expect(paid.headers.get('payment-required')).toBeTruthy();
    const body = (await paid.json()) as { x402Version: number; accepts: Array<Record<string, unknown>> };
    expect(body.x402Version).toBe(2);
    expect(body.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '20000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: spot.service.serviceWallet.address,
    });
    const used = await Promise.all(
      answers
        .filter((res) => res.status === 200)
        .map(
          async (res) =>
            ((await res.json()) as { access: { free_used_today: number } }).access.free_used_today,
        ),
    );
    expect(used.sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('counts at most 25 free checks a day per client network (/24)', async () => {
    const spot = await start();
    const statuses: number[] = [];
    for (let host = 1; host <= 6; host++) {
      const batch = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          check(spot, target(`${host}-${i}`), { ip: `198.51.100.${host}` }),
        ),
      );
      statuses.push(...batch.map((res) => res.status));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(25);
    expect((await check(spot, target('other'), { ip: '198.51.101.1' })).status).toBe(200);
  });

  it('keeps the day count across a restart', async () => {
    const first = await start();
    for (let i = 0; i < 3; i++) expect((await check(first, target(i))).status).toBe(200);
    running = running.filter((spot) => spot !== first);
    await first.stop({ keepData: true });
    // A clean stop moves the index checkpoint past the three receipts (journal records 1 to 3).
    const checkpoint = JSON.parse(await readFile(join(first.dataDir, 'index-checkpoint.json'), 'utf8'));
    expect(checkpoint).toEqual({ cursor: '3' });
    const second = await start(first.dataDir);
    expect((await check(second, target(3))).status).toBe(200);
    expect((await check(second, target(4))).status).toBe(200);
    expect((await check(second, target(5))).status).toBe(402);
  });

  it('restarts on a new UTC day with a fresh count, and on the same day with the day so far', async () => {
    let clock = new Date('2026-11-20T23:58:00Z');
    const first = await start(undefined, () => clock);
    for (let i = 0; i < 5; i++) expect((await check(first, target(`y${i}`))).status).toBe(200);
    expect((await check(first, target('y5'))).status).toBe(402);
    running = running.filter((spot) => spot !== first);
    await first.stop({ keepData: true });
    clock = new Date('2026-11-21T00:01:00Z');
    const second = await start(first.dataDir, () => clock);
    for (let i = 0; i < 2; i++) expect((await check(second, target(`t${i}`))).status).toBe(200);
    running = running.filter((spot) => spot !== second);
    await second.stop({ keepData: true });
    const third = await start(first.dataDir, () => clock);
    for (let i = 2; i < 5; i++) expect((await check(third, target(`t${i}`))).status).toBe(200);
    expect((await check(third, target('t5'))).status).toBe(402);
  });

  it('keeps the day count of free lookups across a restart too', async () => {
    const first = await start();
    const lookup = (spot: TestService) => appFetch(spot.service, '/v1/lookup?task=fx-rate');
    for (let i = 0; i < 4; i++) expect((await lookup(first)).status).toBe(200);
    running = running.filter((spot) => spot !== first);
    await first.stop({ keepData: true });
    const second = await start(first.dataDir);
    expect((await lookup(second)).status).toBe(200);
    expect((await lookup(second)).status).toBe(402);
  });

  it('answers the free shape and a receipt that is durable and readable', async () => {
    const spot = await start();
    const res = await check(spot, `${target()}&pay_to=${PAY_TO}&claimed_price=0.01`);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(FREE_ANSWER_KEYS);
    expect(body).toMatchObject({ verdict: 'pay', reason_code: 'price_ok', check_type: 'dry-run' });
    expect(body.reason).toMatch(/match/);
    expect(body.payment_terms_sha256).toMatch(/^[0-9a-f]{64}$/);
    const receipt = await appFetch(spot.service, `/v1/receipts/${body.receipt_id}`);
    expect(receipt.status).toBe(200);
    expect(await receipt.json()).toMatchObject({
      id: body.receipt_id,
      verdict: 'pay',
      access: { tier: 'free' },
    });
  });
});

describe('dry runs', () => {
  it('are free, never an approval, labelled and listed', async () => {
    const spot = await start();
    const res = await check(spot, `${target()}&pay_to=${PAY_TO}&ref=dry-run-router7`);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ verdict: 'pay', payment_terms_sha256: null, check_type: 'dry-run' });
    const receipt = (await (
      await appFetch(spot.service, `/v1/receipts/${body.receipt_id}`)
    ).json()) as Record<string, unknown>;
    expect(receipt).toMatchObject({ mode: 'dry-run', payment_terms_sha256: null });
    // A dry run's receipt publishes the dry-run answer only.
    expect(receipt).not.toHaveProperty('payment');
    await check(spot, `${target(2)}&mode=live`);
    const list = (await (await appFetch(spot.service, '/v1/receipts?type=dry-run')).json()) as {
      total: number;
      receipts: Array<{ id: string; mode: string }>;
    };
    expect(list.total).toBe(1);
    expect(list.receipts[0]).toMatchObject({ id: body.receipt_id, mode: 'dry-run' });
  });

  it('count 50 per caller by ref and do not use the free checks', async () => {
    const spot = await start();
    const results = await Promise.all(
      Array.from({ length: 52 }, (_, i) => check(spot, `${target(i)}&mode=dry-run&ref=caller-a`)),
    );
    expect(results.filter((res) => res.status === 200)).toHaveLength(50);
    const refused = results.find((res) => res.status === 429)!;
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('dry_run_limit');
    expect((await check(spot, `${target()}&mode=dry-run&ref=caller-b`)).status).toBe(200);
    const live = (await (await check(spot, target('live'))).json()) as {
      access: { free_used_today: number };
    };
    expect(live.access.free_used_today).toBe(1);
  });
});

describe('exempt keys', () => {
  it('answer the paid shape with tier exempt; the self-test key labels receipts self-checked', async () => {
    const spot = await start();
    const partner = (await (
      await check(spot, target(), { headers: { 'x-service-key': EXEMPT_SECRET } })
    ).json()) as Record<string, unknown>;
    expect(partner).toMatchObject({ access: { tier: 'exempt' }, check_type: 'dry-run' });
    expect(partner).toHaveProperty('history_observations');
    expect(partner).toHaveProperty('payment');
    const self = (await (
      await check(spot, target(2), { headers: { authorization: `Bearer ${SELF_SECRET}` } })
    ).json()) as Record<string, unknown>;
    expect(self.check_type).toBe('self-checked');
  });

  it('a wrong key is a 401, never a silent free check', async () => {
    const spot = await start();
    const res = await check(spot, target(), { headers: { 'x-service-key': 'wrong-key-wrong-key-wrong' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_key');
  });
});

describe('probe reuse', () => {
  it('probes a URL and method once per 5 minutes, and says so', async () => {
    const spot = await start();
    const before = prober.calls;
    const key = { headers: { 'x-service-key': EXEMPT_SECRET } };
    const [a, b] = await Promise.all([check(spot, target('same'), key), check(spot, target('same'), key)]);
    // The same request written differently reuses the probe; a trailing slash is another request (decisions.md).
    const c = await check(spot, `url=${encodeURIComponent('HTTPS://Seller.Example:443/item/same#top')}`, key);
    expect(prober.calls - before).toBe(1);
    await check(spot, `url=${encodeURIComponent('https://seller.example/item/same/')}`, key);
    expect(prober.calls - before).toBe(2);
    const cached = await Promise.all(
      [a, b, c].map(
        async (res) => ((await res.json()) as { probe: { cached: boolean; cache_ttl_s: number } }).probe,
      ),
    );
    expect(cached.map((p) => p.cached).sort()).toEqual([false, true, true]);
    expect(cached[0]?.cache_ttl_s).toBe(300);
  });
});

describe('a store error during a check', () => {
  it('answers with history null instead of a 500, and the receipt is still issued', async () => {
    const spot = await start();
    const store = spot.service.deps.store;
    store.endpoint = () => Promise.reject(new Error('store down'));
    const res = await check(spot, target('store-down'), { headers: { 'x-service-key': EXEMPT_SECRET } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ verdict: 'pay', history: null, history_observations: null });
    expect(body.receipt_id).toMatch(/^sc-/);
  });
});
