/**
 * `GET /openapi.json`: an OpenAPI 3.1 document that an independent validator (`@readme/openapi-parser`) accepts and
 * that matches what the live routes answer: every answer below is held to its documented status and schema
 * (`test/helpers/openapi.ts`). That it describes every route, and only served ones: `openapi-routes.test.ts`. Through `app.fetch` with the real
 * journal, DuckDB, signing key and seller; fakes at the prober, chain-reader and facilitator seams.
 */
import { compileErrors, validate } from '@readme/openapi-parser';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { SettleResponse, SupportedKind } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainReaderLike } from '../../../api/payment-status.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { sourceEvidence } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator, previousMonth, recordHostedCalls } from '../../helpers/integrators.ts';
import { openApiChecker } from '../../helpers/openapi.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

const BUYER = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const chain: ChainReaderLike = {
  async read() {
    const one = (name: string) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 });
    return { sources: [one('rpc-1'), one('rpc-2')] };
  },
};
const facilitator: FacilitatorClient = {
  verify: async () => ({ isValid: true, payer: BUYER.address }),
  settle: async () =>
    ({
      success: true,
      transaction: `0x${'cd'.repeat(32)}`,
      network: BASE,
      payer: BUYER.address,
    }) as SettleResponse,
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: 'exact', network: BASE } as SupportedKind],
    extensions: [],
    signers: {},
  }),
};

let spot: TestService;
let doc: Record<string, unknown>;
let checker: ReturnType<typeof openApiChecker>;
beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber(), chain, facilitator }, { listen: false });
  const res = await appFetch(spot.service, '/openapi.json');
  expect(res.status).toBe(200);
  doc = (await res.json()) as Record<string, unknown>;
  checker = openApiChecker(doc);
});
afterAll(async () => {
  await spot.stop();
});

type Operation = { security?: unknown[]; 'x-payment-info'?: Record<string, unknown> };
const operation = (path: string, method: string) =>
  (doc.paths as Record<string, Record<string, Operation>>)[path]?.[method] as Operation;
const CHECK = '/v1/products/endpoint-spot-check';
const STATUS = '/v1/products/payment-status';
const get = (path: string, ip = '203.0.113.40', headers: Record<string, string> = {}) =>
  appFetch(spot.service, path, { ip, headers });
const post = (path: string, body: unknown, ip = '203.0.113.40', headers: Record<string, string> = {}) =>
  appFetch(spot.service, path, {
    ip,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const target = (n: number) => encodeURIComponent(`https://seller.example/openapi/${n}`);

describe('the document', () => {
  it('passes an independent OpenAPI validator', async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { version: '0.44.0' } });
  });

  it('declares lookup without security, and service keys (bearer or x-service-key) on check and payment status', () => {
    expect(operation('/v1/lookup', 'get').security).toEqual([]);
    for (const [path, method] of [
      [CHECK, 'get'],
      [CHECK, 'post'],
      [STATUS, 'post'],
    ] as const) {
      expect(operation(path, method).security).toEqual([{}, { serviceKeyBearer: [] }, { serviceKey: [] }]);
    }
    expect(doc).toMatchObject({
      components: {
        securitySchemes: {
          serviceKeyBearer: { type: 'http', scheme: 'bearer' },
          serviceKey: { type: 'apiKey', in: 'header', name: 'x-service-key' },
        },
      },
    });
  });

  it('gives each paid operation its x402 price, network and asset', () => {
    const paid = { protocols: ['x402'], pricingMode: 'fixed', network: BASE, asset: BASE_USDC };
    expect(operation(CHECK, 'get')['x-payment-info']).toEqual({
      ...paid,
      price: '0.02',
      currency: 'USD',
      scheme: 'exact',
      amount: '20000',
    });
    expect(operation('/v1/lookup/paid', 'get')['x-payment-info']).toMatchObject({ ...paid, price: '0.02' });
    expect(operation(STATUS, 'get')['x-payment-info']).toMatchObject({ ...paid, price: '0.02' });
    expect(operation('/v1/products/overnight-cos-pack', 'get')['x-payment-info']).toMatchObject({
      ...paid,
      price: '9',
      amount: '9000000',
    });
    expect(operation('/v1/tasks', 'get')['x-payment-info']).toBeUndefined();
    // An invoice is sold at its own total: no fixed price is claimed, the 402 states it.
    for (const method of ['get', 'post']) {
      const info = operation('/v1/invoices/{id}/pay', method)['x-payment-info'];
      expect(info).toMatchObject({
        protocols: ['x402'],
        pricingMode: 'quote',
        network: BASE,
        asset: BASE_USDC,
      });
      expect(info).not.toHaveProperty('price');
    }
  });

  it('requires a key on the integrator routes, and none to pay an invoice', () => {
    const required = [{ serviceKeyBearer: [] }, { serviceKey: [] }];
    for (const path of ['/v1/integrators/me', '/v1/invoices/{id}', '/v1/invoices/{id}.pdf']) {
      expect(operation(path, 'get').security, path).toEqual(required);
    }
    expect(operation('/v1/invoices/{id}/pay', 'get').security).toEqual([]);
    expect(operation('/badge/{host}.svg', 'get').security).toEqual([]);
  });
});

describe('live answers match their schemas', () => {
  it('check: free, dry run, exempt, paid, 400 and 402', async () => {
    const ip = '203.0.113.50';
    await checker.check('get', CHECK, await get(`${CHECK}?url=${target(1)}&claimed_price=0.01`, ip));
    await checker.check(
      'post',
      CHECK,
      await post(CHECK, { url: decodeURIComponent(target(2)), mode: 'dry-run' }, ip),
    );
    const exempt = await get(`${CHECK}?url=${target(3)}`, ip, { 'x-service-key': EXEMPT_SECRET });
    expect(await checker.check('get', CHECK, exempt)).toMatchObject({ access: { tier: 'exempt' } });
    const bad = await get(`${CHECK}?url=not-a-url`, ip);
    expect(await checker.check('get', CHECK, bad)).toMatchObject({ error: { code: 'bad_url' } });
    for (const n of [4, 5, 6, 7]) expect((await get(`${CHECK}?url=${target(n)}`, ip)).status).toBe(200);
    const paywall = await get(`${CHECK}?url=${target(8)}`, ip);
    expect(paywall.status).toBe(402);
    await checker.check('get', CHECK, paywall);

    const required = decodePaymentRequiredHeader(paywall.headers.get('payment-required') ?? '');
    const buyer = new x402Client().register('eip155:*', new ExactEvmScheme(BUYER));
    const signature = encodePaymentSignatureHeader(await buyer.createPaymentPayload(required));
    const paid = await get(`${CHECK}?url=${target(8)}`, ip, { 'payment-signature': signature });
    expect(await checker.check('get', CHECK, paid)).toMatchObject({
      access: { tier: 'paid', charged_usd: '0.02' },
    });
  });

  it('payment status, lookup, receipts, tasks, keys', async () => {
    const ip = '203.0.113.60';
    const reference = { from: BUYER.address, nonce: `0x${'ab'.repeat(32)}`, valid_before: '1800000060' };
    const status = await post(STATUS, reference, ip);
    expect(await checker.check('post', STATUS, status)).toMatchObject({ status: 'pending' });
    await checker.check('get', STATUS, await get(`${STATUS}?${new URLSearchParams(reference)}`, ip));
    await checker.check('post', STATUS, await post(STATUS, {}, ip));
    expect(
      await checker.check('post', STATUS, await post(STATUS, { from: 'x', nonce: 'y' }, ip)),
    ).toMatchObject({
      error: { code: 'bad_from' },
    });

    await checker.check('get', '/v1/lookup', await get('/v1/lookup?n=3', ip));
    await checker.check('get', '/v1/lookup', await get('/v1/lookup?n=99', ip));
    await checker.check('get', '/v1/lookup/paid', await get('/v1/lookup/paid?task=x', ip));

    const checked = (await (await get(`${CHECK}?url=${target(20)}`, '203.0.113.61')).json()) as {
      receipt_id: string;
    };
    await checker.check(
      'get',
      '/v1/receipts/{receipt_id}',
      await get(`/v1/receipts/${checked.receipt_id}`, ip),
    );
    await checker.check('get', '/v1/receipts/{receipt_id}', await get('/v1/receipts/sc-nope', ip));
    await checker.check('get', '/v1/receipts/by-url', await get(`/v1/receipts/by-url?url=${target(20)}`, ip));
    await checker.check('get', '/v1/receipts', await get('/v1/receipts?type=dry-run&page_size=2', ip));
    await checker.check('get', '/v1/receipts', await get('/v1/receipts?type=nope', ip));
    await checker.check('get', '/v1/tasks', await get('/v1/tasks', ip));
    await checker.check('get', '/.well-known/jwks.json', await get('/.well-known/jwks.json', ip));
  });
});

describe('hosted answers match their schemas', () => {
  it('check and payment status with a key carry access.tier hosted, access_tier and the hosted block', async () => {
    const hosted = spot.service.deps.hosted;
    if (!hosted) throw new Error('hosted mode is not wired');
    const [key = ''] = await createIntegrator(hosted, 'schema', '0');
    const ip = '203.0.113.80';
    const headers = { authorization: `Bearer ${key}`, 'x-service-end-user': 'agent-1' };
    const checked = await get(`${CHECK}?url=${target(30)}`, ip, headers);
    const block = {
      integrator_id: 'schema',
      band: 'free_allowance',
      price_atomic: '0',
      billed_on: 'invoice',
      end_user_hash: expect.stringMatching(/^eu:/),
    };
    expect(await checker.check('get', CHECK, checked)).toMatchObject({
      access: { tier: 'hosted', hosted: block },
      access_tier: 'hosted',
    });
    const reference = { from: BUYER.address, nonce: `0x${'ef'.repeat(32)}`, valid_before: '1800000060' };
    const status = await post(STATUS, reference, ip, { 'x-service-key': key });
    expect(await checker.check('post', STATUS, status)).toMatchObject({
      access: { tier: 'hosted', hosted: { integrator_id: 'schema', end_user_hash: null } },
      access_tier: 'hosted',
    });
    const revoked = await get(`${CHECK}?url=${target(30)}`, ip, { authorization: 'Bearer sck_live_nope' });
    expect(await checker.check('get', CHECK, revoked)).toMatchObject({ error: { code: 'bad_key' } });
  });

  it('the account, an invoice, its PDF, and paying it', async () => {
    const hosted = spot.service.deps.hosted;
    if (!hosted) throw new Error('hosted mode is not wired');
    const [key = ''] = await createIntegrator(hosted, 'billing', '0');
    const month = previousMonth();
    await recordHostedCalls(hosted, 'billing', month, 1002);
    await hosted.apply(JSON.stringify({ op: 'invoices', month }));
    const id = `inv-${month.replace('-', '')}-billing`;
    const ip = '203.0.113.81';
    const keyed = { 'x-service-key': key };

    const me = await get('/v1/integrators/me', ip, keyed);
    expect(await checker.check('get', '/v1/integrators/me', me)).toMatchObject({
      previous_months: [{ month, calls: 1002, invoice: { id, status: 'open' } }],
    });
    const missing = await get('/v1/integrators/me', ip);
    expect(await checker.check('get', '/v1/integrators/me', missing)).toMatchObject({
      error: { code: 'missing_key' },
    });
    const invoice = await get(`/v1/invoices/${id}`, ip, keyed);
    expect(await checker.check('get', '/v1/invoices/{id}', invoice)).toMatchObject({
      invoice: { id, total: { atomic: '40000' } },
      payment: { status: 'open' },
    });
    const pdf = await get(`/v1/invoices/${id}.pdf`, ip, keyed);
    await checker.check('get', '/v1/invoices/{id}.pdf', pdf);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');

    const link = new URL(
      ((await invoice.clone().json()) as { payment: { pay_url: string } }).payment.pay_url,
    );
    const pay = `${link.pathname}${link.search}`;
    const unpaid = await get(pay, ip);
    await checker.check('get', '/v1/invoices/{id}/pay', unpaid);
    const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? '');
    expect(required.accepts[0]).toMatchObject({ amount: '40000', network: BASE, asset: BASE_USDC });
    const buyer = new x402Client().register('eip155:*', new ExactEvmScheme(BUYER));
    const signature = encodePaymentSignatureHeader(await buyer.createPaymentPayload(required));
    const paid = await get(pay, ip, { 'payment-signature': signature });
    expect(await checker.check('get', '/v1/invoices/{id}/pay', paid)).toMatchObject({
      invoice_id: id,
      payment: { status: 'paid' },
    });
    const again = await get(pay, ip);
    expect(await checker.check('get', '/v1/invoices/{id}/pay', again)).toMatchObject({
      error: { code: 'invoice_paid' },
    });
  });
});
