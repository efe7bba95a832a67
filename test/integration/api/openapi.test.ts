/**
 * `GET /openapi.json`: an OpenAPI 3.1 document that an independent validator (`@readme/openapi-parser`) accepts,
 * that describes only routes that are served, and that matches what the live routes answer: every answer below is
 * held to its documented status and schema (`test/helpers/openapi.ts`). Through `app.fetch` with the real
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
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { version: '0.42.1' } });
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
  });
});

describe('every described operation is served and answers a documented status', () => {
  it('never answers 404 for a described route', async () => {
    const receiptId = (
      (await (await get(`${CHECK}?url=${target(0)}`, '203.0.113.41')).json()) as { receipt_id: string }
    ).receipt_id;
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(methods)) {
        const concrete = path.replace('{receipt_id}', receiptId);
        const res =
          method === 'post'
            ? await post(concrete, {}, '203.0.113.42', { accept: 'application/json, text/event-stream' })
            : await get(concrete, '203.0.113.42');
        expect(res.status, `${method} ${path}`).not.toBe(404);
        await checker.check(method, path, res);
      }
    }
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
