/**
 * The service's other paid routes end to end (docs/api.md §4, §7, §8): the catalog lookup (free 5 a day, then USD 0.02;
 * `/v1/lookup/paid` always paid) and the setup pack (always paid, USD 9), sold by the real service wired to the
 * sandbox world and paid by the official buyer client. Money is read on chain.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, BASE_USDC } from '../../core/networks.ts';
import { fetchFrom, type PaidWorld, requirementOf, startPaidWorld } from '../helpers/world.ts';

// docs/api.md §8 literals, never read from core/limits.ts: a wrong published limit must fail here.
/** USD 0.02 in atomic USDC. */
const LOOKUP_PRICE = 20000n;
/** USD 9 in atomic USDC. */
const PACK_PRICE = 9000000n;
/** Free lookups per client per UTC day. */
const FREE_LOOKUPS = 5;
const PACK_PATH = '/v1/products/overnight-cos-pack';
/** A task of `data/tasks.json`. */
const TASK = 'weather-current';
let paid: PaidWorld;

beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 6 });
});
afterAll(async () => {
  await paid?.stop();
});

function url(path: string, params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString();
  return `${paid.spot.url}${path}${query ? `?${query}` : ''}`;
}

function expectRequirement(response: Response, amount: string, path: string): void {
  expect(response.status).toBe(402);
  const required = requirementOf(response);
  expect(required.resource?.url).toBe(`${paid.spot.config.baseUrl}${path}`);
  expect(required.accepts).toHaveLength(1);
  expect(required.accepts[0]).toMatchObject({
    scheme: 'exact',
    network: BASE,
    amount,
    payTo: paid.world.state.serviceWallet,
  });
  expect(required.accepts[0]?.asset.toLowerCase()).toBe(BASE_USDC.toLowerCase());
}

/** The settlement named by `access.tx` and `PAYMENT-RESPONSE` moved exactly `price` from buyer `index`. */
async function expectSettled(response: Response, body: { access: unknown }, index: number, price: bigint) {
  const access = body.access as { tier: string; charged_usd: string; tx: `0x${string}` };
  expect(access).toMatchObject({ tier: 'paid', tx: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  const settled = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
  expect(settled).toMatchObject({ success: true, transaction: access.tx, network: BASE });
  expect(await paid.transfers(access.tx)).toEqual([
    { from: paid.buyer(index).address, to: paid.world.state.serviceWallet, value: price },
  ]);
  return access;
}

describe('GET /v1/lookup/paid', () => {
  it('answers 402 to an unpaid request: USD 0.02, exact, Base USDC, to the service wallet', async () => {
    const response = await fetch(url('/v1/lookup/paid', { task: TASK }));
    expectRequirement(response, '20000', '/v1/lookup/paid');
  });

  it('is paid by the official client: 200, access.tx on chain, exactly 20000 atomic moved', async () => {
    const before = await paid.balances(0);
    const response = await paid.payingFetch(0)(
      url('/v1/lookup/paid', { task: TASK, max_price: '0.05', n: '3', limit: '5' }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: unknown; facts_only: unknown; access: unknown };
    expect(Array.isArray(body.results)).toBe(true);
    expect(Array.isArray(body.facts_only)).toBe(true);
    const access = await expectSettled(response, body, 0, LOOKUP_PRICE);
    expect(access.charged_usd).toBe('0.02');
    const after = await paid.balances(0);
    expect(after.service - before.service).toBe(LOOKUP_PRICE);
    expect(before.buyer - after.buyer).toBe(LOOKUP_PRICE);
  });

  it.each([
    ['no task and no endpoint', { max_price: '0.05' }, 'missing_task_or_endpoint'],
    ['n out of range', { task: TASK, n: '99' }, 'bad_n'],
    ['an unknown task', { task: 'no-such-task' }, 'unknown_task'],
  ])(
    'bad parameters with a valid payment (%s): 400 after the 402, nothing settled',
    async (_, params, code) => {
      const before = await paid.balances(1);
      const settles = paid.world.facilitator.calls.settle;
      const response = await paid.payingFetch(1)(url('/v1/lookup/paid', params));
      expect(response.status).toBe(400);
      expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
      expect(paid.world.facilitator.calls.settle).toBe(settles);
      expect(await paid.balances(1)).toEqual(before);
    },
  );
});

describe('GET /v1/lookup (free tier)', () => {
  it(`gives ${FREE_LOOKUPS} free lookups a day per client, never meters a 400, then answers 402`, async () => {
    const asClient = fetchFrom('198.18.20.10');
    const bad = await asClient(url('/v1/lookup', { task: TASK, limit: '0' }));
    expect(bad.status).toBe(400);
    for (let used = 1; used <= FREE_LOOKUPS; used += 1) {
      const response = await asClient(url('/v1/lookup', { task: TASK }));
      expect(response.status).toBe(200);
      const body = (await response.json()) as { access: unknown };
      expect(body.access).toEqual({
        tier: 'free',
        free_per_day: FREE_LOOKUPS,
        free_used_today: used,
      });
    }
    const sixth = await asClient(url('/v1/lookup', { task: TASK }));
    expect(sixth.status).toBe(402);
    expect(requirementOf(sixth).accepts[0]?.amount).toBe('20000');
  });

  it('the official client pays the 402 of a used-up free tier', async () => {
    const ip = '198.18.21.10';
    for (let i = 0; i < FREE_LOOKUPS; i += 1) {
      expect((await fetchFrom(ip)(url('/v1/lookup', { task: TASK }))).status).toBe(200);
    }
    const before = await paid.balances(2);
    const response = await paid.payingFetch(2, { ip })(url('/v1/lookup', { task: TASK }));
    expect(response.status).toBe(200);
    await expectSettled(response, (await response.json()) as { access: unknown }, 2, LOOKUP_PRICE);
    expect((await paid.balances(2)).service - before.service).toBe(LOOKUP_PRICE);
  });
});

describe('the setup pack', () => {
  it.each(['GET', 'POST'])('answers an unpaid %s with 402 for USD 9 (9000000 atomic)', async (method) => {
    const response = await fetch(url(PACK_PATH), { method });
    expectRequirement(response, '9000000', PACK_PATH);
  });

  it("is refused by the official client's default $1 cap, and nothing moves", async () => {
    const before = await paid.balances(3);
    await expect(paid.payingFetch(3)(url(PACK_PATH))).rejects.toThrow(/spend/i);
    expect(await paid.balances(3)).toEqual(before);
  });

  it('is paid at USD 9 with a raised cap: the product with base64 files, a real PDF, exactly 9000000 moved', async () => {
    const before = await paid.balances(4);
    const response = await paid.payingFetch(4, { maxUsd: '$10' })(url(PACK_PATH));
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      product: string;
      title: string;
      price_usdc: string;
      files: {
        prompts: Array<{ content_base64: string }>;
        templates: Array<{ content_base64: string }>;
        guide: { content_base64: string; media_type?: string };
      };
      access: unknown;
    };
    expect(body.product).toBe('overnight-cos-pack');
    expect(body.title.length).toBeGreaterThan(0);
    expect(Number(body.price_usdc)).toBe(9);
    expect(body.files.prompts.length).toBeGreaterThan(0);
    expect(body.files.templates.length).toBeGreaterThan(0);
    for (const file of [...body.files.prompts, ...body.files.templates]) {
      expect(Buffer.from(file.content_base64, 'base64').length).toBeGreaterThan(0);
    }
    const pdf = Buffer.from(body.files.guide.content_base64, 'base64');
    expect(pdf.subarray(0, 4).toString('latin1')).toBe('%PDF');
    expect(pdf.subarray(-1024).toString('latin1')).toContain('%%EOF');

    const access = await expectSettled(response, body, 4, PACK_PRICE);
    expect(access.charged_usd).toBe('9');
    const after = await paid.balances(4);
    expect(after.service - before.service).toBe(PACK_PRICE);
    expect(before.buyer - after.buyer).toBe(PACK_PRICE);
  });
});
