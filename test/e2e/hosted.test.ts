/**
 * Hosted mode end to end: the real service on a port over the sandbox world, an integrator and
 * its keys made with the operator's operations, hosted checks past 1,000 and 2,000 calls of the month with exact
 * bands (usage before the test calls is seeded through the meter, the calls themselves are real and concurrent),
 * the per-key rate limit, suspended and revoked keys (401, never a free answer), the credit limit (402 with
 * `x-service-hosted: credit_limit`, then paid by the official client), and a monthly invoice paid through x402.
 * Spec literals are written out here, never read from core/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIntegrator, previousMonth, recordHostedCalls } from '../helpers/integrators.ts';
import { fetchFrom, type PaidWorld, requirementOf, startPaidWorld } from '../helpers/world.ts';

const PATH = '/v1/products/endpoint-spot-check';
let paid: PaidWorld;
/** A settlement transaction of this run (the credit-limit test), for payment status. */
let settledTx = '';
const AT = '2026-01-01T00:00:00.000Z';

beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 4 });
});
afterAll(async () => {
  await paid?.stop();
});

function hosted() {
  const value = paid.spot.service.deps.hosted;
  if (!value) throw new Error('hosted mode is not wired');
  return value;
}

/** An integrator with a credit limit (atomic USDC) and `keys` active keys, made as the operator CLI makes them. */
const integrator = (id: string, creditLimitAtomic: string, keys = 1) =>
  createIntegrator(hosted(), id, creditLimitAtomic, keys);

function month(): string {
  return new Date().toISOString().slice(0, 7);
}

const checkUrl = () =>
  `${paid.spot.url}${PATH}?${new URLSearchParams({ url: paid.world.sellers.urls['sdk-ok'] })}`;
const hostedCheck = (key: string, headers: Record<string, string> = {}) =>
  fetchFrom('198.18.9.1')(checkUrl(), { headers: { authorization: `Bearer ${key}`, ...headers } });

type HostedBody = {
  access: {
    tier: string;
    hosted: {
      band: string;
      price_atomic: string;
      integrator_id: string;
      end_user_hash: string | null;
      month: string;
      billed_on: string;
    };
  };
  access_tier: string;
  payment: unknown;
};

describe('hosted checks', () => {
  it('carry exact bands past 1,000 and 2,000 calls of the month, under concurrency', async () => {
    const [key = ''] = await integrator('bands', '100000000');
    hosted().meter.restore(month(), 'bands', 996, []);
    const first = await Promise.all(
      Array.from({ length: 8 }, () => hostedCheck(key, { 'x-service-end-user': 'agent-7' })),
    );
    const bodies = (await Promise.all(first.map((r) => r.json()))) as HostedBody[];
    expect(first.map((r) => r.status)).toEqual(Array(8).fill(200));
    const bands = bodies.map((b) => b.access.hosted.band).sort();
    expect(bands).toEqual([...Array(4).fill('free_allowance'), ...Array(4).fill('standard')]);
    for (const body of bodies) {
      expect(body.access.tier).toBe('hosted');
      expect(body.access_tier).toBe('hosted');
      expect(body.payment).not.toBeNull();
      expect(body.access.hosted).toMatchObject({
        integrator_id: 'bands',
        month: month(),
        billed_on: 'invoice',
      });
      expect(body.access.hosted.end_user_hash).toMatch(/^eu:/);
      expect(body.access.hosted.end_user_hash).not.toContain('agent-7');
      expect(body.access.hosted.price_atomic).toBe(body.access.hosted.band === 'standard' ? '20000' : '0');
    }
    expect(first[0]?.headers.get('ratelimit-policy')).toBe('"hosted";q=120;w=60');

    hosted().meter.restore(month(), 'bands', 1996 - 1004, []);
    const second = (await Promise.all(
      Array.from({ length: 8 }, () => hostedCheck(key).then((r) => r.json())),
    )) as HostedBody[];
    expect(second.map((b) => [b.access.hosted.band, b.access.hosted.price_atomic]).sort()).toEqual([
      ...Array(4).fill(['standard', '20000']),
      ...Array(4).fill(['volume', '10000']),
    ]);

    const me = await (
      await fetch(`${paid.spot.url}/v1/integrators/me`, { headers: { 'x-service-key': key } })
    ).json();
    expect(me.current_month).toMatchObject({
      calls: 2004,
      bands: { free_allowance: 1000, standard: 1000, volume: 4 },
      amount_due: { atomic: String(1000 * 20000 + 4 * 10000), usd: '20.04' },
      end_users: 1,
    });
  });

  it('are limited to 120 a minute per key, with RateLimit headers and Retry-After', async () => {
    const [a = '', b = ''] = await integrator('rated', '0', 2);
    const answers = await Promise.all(Array.from({ length: 121 }, () => hostedCheck(a)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    const refused = answers.find((r) => r.status === 429);
    if (!refused) throw new Error('no 429');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"hosted";r=0;t=\d+$/);
    expect((await refused.json()).error.code).toBe('rate_limited');
    // The limit is per key: the integrator's other key still answers.
    expect((await hostedCheck(b)).status).toBe(200);
  });

  it('with a suspended, revoked or unknown key are a 401 and never a free answer', async () => {
    const [key = ''] = await integrator('states', '0');
    const keyId = key.split('_')[2] ?? '';
    expect((await hostedCheck(key)).status).toBe(200);
    await hosted().apply(JSON.stringify({ op: 'state', target: keyId, state: 'suspended', at: AT }));
    const suspended = await hostedCheck(key);
    expect(suspended.status).toBe(401);
    expect((await suspended.json()).error.code).toBe('bad_key');
    await hosted().apply(JSON.stringify({ op: 'state', target: keyId, state: 'active', at: AT }));
    expect((await hostedCheck(key)).status).toBe(200);
    await hosted().apply(JSON.stringify({ op: 'state', target: keyId, state: 'revoked', at: AT }));
    for (const presented of [key, `${key.slice(0, -2)}zz`, 'sck_live_000000000000_nope']) {
      const response = await hostedCheck(presented);
      expect(response.status).toBe(401);
      expect(JSON.stringify(await response.json())).not.toContain('"tier"');
    }
    // Payment status takes the same keys.
    const status = await fetchFrom('198.18.9.2')(`${paid.spot.url}/v1/products/payment-status`, {
      method: 'POST',
      headers: { 'x-service-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ tx_hash: `0x${'ab'.repeat(32)}` }),
    });
    expect(status.status).toBe(401);
  });

  it('past the credit limit answer 402 with x-service-hosted: credit_limit, and paying it works', async () => {
    const [key = ''] = await integrator('capped', '20000');
    hosted().meter.restore(month(), 'capped', 1000, []);
    const first = (await (await hostedCheck(key)).json()) as HostedBody;
    expect(first.access.hosted).toMatchObject({ band: 'standard', price_atomic: '20000' });
    const refused = await hostedCheck(key);
    expect(refused.status).toBe(402);
    expect(refused.headers.get('x-service-hosted')).toBe('credit_limit');
    expect(requirementOf(refused).accepts[0]).toMatchObject({
      amount: '20000',
      payTo: paid.world.state.serviceWallet,
    });
    const before = await paid.balances(0);
    const paying = paid.payingFetch(0, { ip: '198.18.9.3' });
    const answer = await paying(checkUrl(), { headers: { authorization: `Bearer ${key}` } });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { access: { tier: string; tx: string } };
    expect(body.access.tier).toBe('paid');
    settledTx = body.access.tx;
    expect((await paid.balances(0)).service - before.service).toBe(20000n);
    // The paid call is not on the invoice: the month still counts 1,001 hosted calls.
    expect(await hosted().meter.calls('capped', month())).toBe(1001);
  });
});

describe('hosted payment status', () => {
  it('answers with the hosted block and counts in the same month as the checks', async () => {
    expect(settledTx).toMatch(/^0x[0-9a-f]{64}$/);
    const [key = ''] = await integrator('status', '0');
    const ask = () =>
      fetchFrom('198.18.9.5')(`${paid.spot.url}/v1/products/payment-status`, {
        method: 'POST',
        headers: { 'x-service-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ tx_hash: settledTx }),
      });
    const first = await ask();
    expect(first.status).toBe(200);
    const body = (await first.json()) as HostedBody & { status: string };
    expect(body.status).toBe('landed');
    expect(body.access_tier).toBe('hosted');
    expect(body.access).toMatchObject({
      tier: 'hosted',
      hosted: { integrator_id: 'status', band: 'free_allowance', price_atomic: '0' },
    });
    expect(first.headers.get('ratelimit')).toMatch(/^"hosted";r=119;t=\d+$/);
    expect((await ask()).status).toBe(200);
    expect(await hosted().meter.calls('status', month())).toBe(2);
  });
});

describe('monthly invoices', () => {
  it('are paid through x402 for exactly their total, once, and show paid', async () => {
    const [key = ''] = await integrator('billed', '0');
    const last = previousMonth();
    // 1,500 hosted checks last month, journaled as the check route journals them: 500 at USD 0.02.
    await recordHostedCalls(hosted(), 'billed', last, 1500);
    const run = JSON.parse(await hosted().apply(JSON.stringify({ op: 'invoices', month: last })));
    const id = `inv-${last.replace('-', '')}-billed`;
    expect(run).toContainEqual({ id, integrator: 'billed', total_atomic: '10000000', created: true });

    const read = await fetch(`${paid.spot.url}/v1/invoices/${id}`, { headers: { 'x-service-key': key } });
    // The link the integrator hands its payer: the pay route with the invoice's random token (on the service's
    // BASE_URL; the test reaches the same path on its port).
    const link = new URL(((await read.json()) as { payment: { pay_url: string } }).payment.pay_url);
    expect(`${link.pathname}${link.search}`).toMatch(
      new RegExp(`^/v1/invoices/${id}/pay\\?token=[0-9a-f]{32}$`),
    );
    const payUrl = `${paid.spot.url}${link.pathname}${link.search}`;
    expect((await fetch(`${paid.spot.url}/v1/invoices/${id}/pay`)).status).toBe(404);
    const unpaid = await fetch(payUrl);
    expect(unpaid.status).toBe(402);
    expect(requirementOf(unpaid).accepts[0]).toMatchObject({
      amount: '10000000',
      payTo: paid.world.state.serviceWallet,
      network: 'eip155:8453',
    });

    const before = await paid.balances(1);
    const answer = await paid.payingFetch(1, { maxUsd: '10', ip: '198.18.9.4' })(payUrl);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { payment: { status: string; tx: string }; access: { tx: string } };
    expect(body.payment).toMatchObject({ status: 'paid', tx: body.access.tx });
    const after = await paid.balances(1);
    expect(after.service - before.service).toBe(10_000_000n);
    expect(before.buyer - after.buyer).toBe(10_000_000n);
    expect(await paid.transfers(body.access.tx as `0x${string}`)).toEqual([
      { from: paid.buyer(1).address, to: paid.world.state.serviceWallet, value: 10_000_000n },
    ]);

    const me = await (
      await fetch(`${paid.spot.url}/v1/integrators/me`, { headers: { authorization: `Bearer ${key}` } })
    ).json();
    expect(me.previous_months[0]).toMatchObject({
      month: last,
      calls: 1500,
      invoice: { id, status: 'paid', tx: body.access.tx, total: { atomic: '10000000', usd: '10' } },
    });
    const again = await paid.payingFetch(1, { maxUsd: '10', ip: '198.18.9.4' })(payUrl);
    expect(again.status).toBe(409);
    expect((await again.json()).error.code).toBe('invoice_paid');
    expect((await paid.balances(1)).buyer).toBe(after.buyer);
  });
});
