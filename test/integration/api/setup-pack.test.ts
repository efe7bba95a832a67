/**
 * `GET`/`POST /v1/products/overnight-cos-pack` through `app.fetch`: the real seller and sales adapter with a fake
 * facilitator at the injected seam, and payments signed by the official x402 client. Unpaid calls get the USD 9
 * challenge; paid calls get the pack with `access`; a pack that cannot be built charges nothing.
 */
import { x402Client } from '@x402/core/client';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { SettleResponse, SupportedKind } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { H3 } from 'h3';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setupPackRoutes, usdPriceText } from '../../../api/routes/setup-pack.ts';
import { createSales } from '../../../api/sales.ts';
import { createSeller } from '../../../api/x402/seller.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { loadSetupPack, type PackFile, type SetupPack } from '../../../io/documents/setup-pack.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const ORIGIN = 'https://spotcheck.example';
const PATH = '/v1/products/overnight-cos-pack';
const PAY_TO = '0x2222222222222222222222222222222222222222';
const BUYER = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const TX = `0x${'cd'.repeat(32)}`;

let pack: Promise<SetupPack>;
beforeAll(() => {
  pack = loadSetupPack({ baseUrl: ORIGIN });
});

function world(packOverride?: Promise<SetupPack>) {
  const facilitator = {
    verify: vi.fn(async () => ({ isValid: true, payer: BUYER.address })),
    settle: vi.fn(
      async () => ({ success: true, transaction: TX, network: BASE, payer: BUYER.address }) as SettleResponse,
    ),
    getSupported: vi.fn(async () => ({
      kinds: [{ x402Version: 2, scheme: 'exact', network: BASE }] as SupportedKind[],
      extensions: [],
      signers: {},
    })),
  } satisfies FacilitatorClient;
  const sales = createSales(createSeller({ facilitator, payTo: PAY_TO }), ORIGIN);
  const app = new H3();
  setupPackRoutes(app, { sales, baseUrl: ORIGIN }, packOverride ?? pack);
  const call = (method: 'GET' | 'POST', headers: Record<string, string> = {}) =>
    Promise.resolve(
      app.fetch(
        new Request(`${ORIGIN}${PATH}`, {
          method,
          headers: method === 'POST' ? { 'content-type': 'application/json', ...headers } : headers,
          ...(method === 'POST' ? { body: '{}' } : {}),
        }),
      ),
    );
  /** Pays the 402 the route gives now with the official client, and returns the paid answer. */
  const buy = async (method: 'GET' | 'POST') => {
    const unpaid = await call(method);
    const challenge = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') ?? '');
    // The SDK client caps a payment at USD 1 by default; a buyer of the USD 9 pack raises it.
    const client = x402Client.fromConfig({
      schemes: [{ network: BASE, client: new ExactEvmScheme(BUYER) }],
      spendControls: { maxAmountPerPayment: '$9' },
    });
    const signature = encodePaymentSignatureHeader(await client.createPaymentPayload(challenge));
    return call(method, { 'PAYMENT-SIGNATURE': signature });
  };
  return { facilitator, call, buy };
}

describe('unpaid', () => {
  it.each(['GET', 'POST'] as const)(
    '%s answers 402 with the USD 9 Base USDC requirement and discovery',
    async (method) => {
      const { facilitator, call } = world();
      const response = await call(method);
      expect(response.status).toBe(402);
      const challenge = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED') ?? '');
      expect(await response.json()).toEqual(challenge);
      expect(challenge.resource.url).toBe(`${ORIGIN}${PATH}`);
      expect(challenge.accepts).toEqual([
        expect.objectContaining({
          scheme: 'exact',
          network: BASE,
          amount: '9000000',
          asset: BASE_USDC,
          payTo: PAY_TO,
        }),
      ]);
      const bazaar = challenge.extensions?.['bazaar'] as { info: { input: { method: string } } } | undefined;
      expect(bazaar?.info.input.method).toBe(method);
      expect(facilitator.verify).not.toHaveBeenCalled();
      expect(facilitator.settle).not.toHaveBeenCalled();
    },
  );
});

describe('paid', () => {
  it.each(['GET', 'POST'] as const)(
    '%s delivers the pack with access and the settlement transaction',
    async (method) => {
      const { facilitator, buy } = world();
      const response = await buy(method);
      expect(response.status).toBe(200);
      expect(decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '')).toMatchObject({
        success: true,
        transaction: TX,
      });
      const body = (await response.json()) as Record<string, unknown> & { files: SetupPack['files'] };
      expect(body).toMatchObject({
        product: 'overnight-cos-pack',
        title: expect.any(String),
        edition: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        price_usdc: '9.00',
        price_atomic: '9000000',
        access: { tier: 'paid', charged_usd: '9', tx: TX },
      });
      expect(body.files.prompts.map((file) => file.name)).toEqual([
        '01-before-paying.md',
        '02-after-paying.md',
        '03-morning-report.md',
        '04-budget-rules.md',
      ]);
      const prompt = Buffer.from((body.files.prompts[0] as PackFile).content_base64, 'base64').toString(
        'utf8',
      );
      expect(prompt).toContain(`${ORIGIN}/v1/products/endpoint-spot-check`);
      expect(body.files.templates).toEqual([
        expect.objectContaining({ name: 'morning-report.html', media_type: 'text/html' }),
      ]);
      const guide = body.files.guide;
      const pdf = Buffer.from(guide.content_base64, 'base64');
      expect(guide).toMatchObject({ name: 'spotcheck-overnight-guide.pdf', media_type: 'application/pdf' });
      expect(pdf.length).toBe(guide.bytes);
      expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(guide.sha256).toBe((await pack).files.guide.sha256);
      expect(facilitator.verify).toHaveBeenCalledTimes(1);
      expect(facilitator.settle).toHaveBeenCalledTimes(1);
    },
  );

  it('serves the one pack built at start-up to every buyer', async () => {
    const { buy } = world();
    const first = (await (await buy('GET')).json()) as { files: SetupPack['files'] };
    const second = (await (await buy('POST')).json()) as { files: SetupPack['files'] };
    expect(second.files).toEqual(first.files);
  });

  it('charges nothing when the pack could not be built', async () => {
    const broken = Promise.reject(new Error('guide: front matter (---) missing'));
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { facilitator, buy } = world(broken);
    const response = await buy('GET');
    expect(response.status).toBe(500);
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(facilitator.settle).not.toHaveBeenCalled();
    expect(logged).toHaveBeenCalledWith('[spotcheck] setup pack could not be built:', expect.any(Error));
    logged.mockRestore();
  });
});

describe('price text', () => {
  it.each([
    ['9000000', '9.00'],
    ['20000', '0.02'],
    ['1500000', '1.50'],
    ['1234567', '1.234567'],
  ])('%s atomic is USD %s', (atomic, text) => {
    expect(usdPriceText(atomic)).toBe(text);
  });
});

describe('in the whole app', () => {
  let spot: TestService;
  beforeAll(async () => {
    spot = await startTestService({}, {}, { listen: false });
  });
  afterAll(() => spot.stop());

  it('is registered: an unpaid call gets the USD 9 challenge for the service origin', async () => {
    const response = await appFetch(spot.service, PATH);
    expect(response.status).toBe(402);
    const challenge = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED') ?? '');
    expect(challenge.accepts[0]?.amount).toBe('9000000');
    expect(challenge.resource.url).toBe(`${spot.config.baseUrl}${PATH}`);
  });
});
