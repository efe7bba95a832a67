/**
 * The check on a challenge the client received (`payment_required`, `selected_requirement`; docs/api.md §4) through
 * `app.fetch` of the real service, with fakes only at the prober and facilitator seams: every 400 code on GET, POST,
 * before any unit or payment is taken, whoever asks; the verdict and terms hash the same for free, paid, exempt and
 * hosted callers; and a check without a challenge unchanged.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, SettleResponse, SupportedKind } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppDeps } from '../../../api/deps.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { paymentTermsSha256 } from '../../../core/payment.ts';
import {
  buildAccept,
  buildPaymentRequired,
  buildV1Accept,
  buildV1Body,
  buildV2Header,
  PAY_TO,
  RESOURCE_URL,
  toBase64,
} from '../../fixtures/challenge.ts';
import { TX } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator } from '../../helpers/integrators.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

const BUYER = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const EVIL = '0x6666666666666666666666666666666666666666';
const PATH = '/v1/products/endpoint-spot-check';
const HASH = paymentTermsSha256({ network: BASE, asset: BASE_USDC, amountAtomic: '10000', payTo: PAY_TO });

function fakeFacilitator() {
  const payerOf = (payload: PaymentPayload) =>
    String((payload.payload as { authorization?: { from?: string } }).authorization?.from ?? '');
  return {
    verify: vi.fn(async (payload: PaymentPayload) => ({ isValid: true, payer: payerOf(payload) })),
    settle: vi.fn(
      async (payload: PaymentPayload) =>
        ({ success: true, transaction: TX, network: BASE, payer: payerOf(payload) }) as SettleResponse,
    ),
    getSupported: vi.fn(async () => ({
      kinds: [{ x402Version: 2, scheme: 'exact', network: BASE } as SupportedKind],
      extensions: [],
      signers: {},
    })),
  } satisfies FacilitatorClient;
}

let spot: TestService;
let facilitator: ReturnType<typeof fakeFacilitator>;
let hostedKey = '';
beforeAll(async () => {
  facilitator = fakeFacilitator();
  spot = await startTestService({}, { prober: fakeProber(), facilitator }, { listen: false });
  const hosted = (spot.service.deps as AppDeps).hosted;
  if (!hosted) throw new Error('hosted mode is not wired');
  [hostedKey = ''] = await createIntegrator(hosted, 'guardtest', '0');
});
afterAll(async () => {
  await spot?.stop();
});

let ip = 0;
/** A fresh client address each call, so the free quota (5 a day) never runs out mid-test. */
const nextIp = () => `10.${(++ip >> 8) & 255}.${ip & 255}.7`;

function get(query: Record<string, string>, headers: Record<string, string> = {}) {
  return appFetch(spot.service, `${PATH}?${new URLSearchParams(query)}`, { headers, ip: nextIp() });
}

function post(body: unknown, headers: Record<string, string> = {}) {
  return appFetch(spot.service, PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    ip: nextIp(),
  });
}

async function bodyOf(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

const url = RESOURCE_URL;
const evilRequired = buildPaymentRequired({ accepts: [buildAccept({ payTo: EVIL })] });
const padded = buildPaymentRequired({
  resource: { url, description: 'x'.repeat(17_000), mimeType: 'application/json' },
});

describe('400 codes of payment_required and selected_requirement', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['not base64', { payment_required: 'not base64!' }, 'payment_required_invalid'],
    ['base64 of text', { payment_required: toBase64('hello') }, 'payment_required_invalid'],
    ['no x402Version', { payment_required: toBase64('{"accepts":[]}') }, 'payment_required_invalid'],
    [
      'a decimal amount',
      { payment_required: buildV2Header({ accepts: [buildAccept({ amount: '0.01' })] }) },
      'payment_required_invalid',
    ],
    ['no options', { payment_required: buildV2Header({ accepts: [] }) }, 'payment_required_invalid'],
    ['a number', { payment_required: 12 }, 'payment_required_invalid'],
    ['over 16 KiB of base64', { payment_required: 'A'.repeat(16 * 1024 + 4) }, 'payment_required_too_large'],
    ['over 16 KiB of JSON', { payment_required: padded }, 'payment_required_too_large'],
    [
      'another resource (v2)',
      { payment_required: buildV2Header({ resource: { url: 'https://other.example/x' } }) },
      'payment_required_resource_mismatch',
    ],
    [
      'another resource (v1)',
      {
        payment_required: toBase64(
          buildV1Body({ accepts: [buildV1Accept(), buildV1Accept({ resource: 'https://other.example/x' })] }),
        ),
      },
      'payment_required_resource_mismatch',
    ],
    [
      'a selection not offered',
      { payment_required: buildV2Header(), selected_requirement: buildAccept({ amount: '20000' }) },
      'selected_requirement_not_offered',
    ],
    ['a selection without a challenge', { selected_requirement: buildAccept() }, 'payment_required_invalid'],
    [
      'a selection that is not a requirement',
      { payment_required: buildV2Header(), selected_requirement: { scheme: 'exact' } },
      'payment_required_invalid',
    ],
  ];

  it.each(cases)('%s', async (_name, members, code) => {
    const bodies = [await bodyOf(await post({ url, ...members }))];
    // GET carries objects as base64 of their JSON, and only text.
    if (Object.values(members).every((value) => typeof value === 'string' || typeof value === 'object')) {
      const query = Object.fromEntries(
        Object.entries(members).map(([name, value]) => [
          name,
          typeof value === 'string' ? value : toBase64(JSON.stringify(value)),
        ]),
      );
      const response = await get({ url: url, ...query });
      expect(response.status).toBe(400);
      bodies.push(await bodyOf(response));
    }
    for (const body of bodies) expect((body as { error: { code: string } }).error.code).toBe(code);
  });

  it('is the same 400, taking nothing, for free, exempt, hosted and paying callers', async () => {
    const settled = facilitator.settle.mock.calls.length;
    const query = { url, payment_required: buildV2Header({ resource: { url: 'https://other.example/x' } }) };
    const callers: Array<Record<string, string>> = [
      {},
      { 'x-service-key': EXEMPT_SECRET },
      { authorization: `Bearer ${hostedKey}` },
      { 'payment-signature': await paymentFor() },
    ];
    for (const headers of callers) {
      const response = await get(query, headers);
      expect(response.status).toBe(400);
      expect(await bodyOf(response)).toMatchObject({ error: { code: 'payment_required_resource_mismatch' } });
    }
    expect(facilitator.settle.mock.calls.length).toBe(settled);
  });
});

describe('the verdict on the sent challenge', () => {
  it('pays the requirement the client received, on GET and POST, in every form', async () => {
    const forms: Array<Record<string, unknown>> = [
      { payment_required: buildV2Header() },
      { payment_required: buildPaymentRequired(), selected_requirement: buildAccept() },
      { payment_required: buildV2Header(), selected_requirement: toBase64(JSON.stringify(buildAccept())) },
      { payment_required: toBase64(buildV1Body({ accepts: [buildV1Accept({ resource: url })] })) },
      { payment_required: JSON.parse(buildV1Body({ accepts: [buildV1Accept({ resource: url })] })) },
    ];
    for (const members of forms) {
      const answer = await bodyOf(await post({ url, ...members }, { 'x-service-key': EXEMPT_SECRET }));
      expect(answer, JSON.stringify(members).slice(0, 80)).toMatchObject({
        verdict: 'pay',
        payment_terms_sha256: HASH,
        payment: { pay_to: PAY_TO, amount: { atomic: '10000' } },
        sent_challenge: { selected_terms_sha256: HASH },
      });
    }
    const viaGet = await bodyOf(await get({ url, payment_required: buildV2Header() }));
    expect(viaGet).toMatchObject({ verdict: 'pay', payment_terms_sha256: HASH });
  });

  it('hashes the challenge alike whether sent as the header value or as its JSON', async () => {
    const a = await bodyOf(
      await post({ url, payment_required: buildV2Header() }, { 'x-service-key': EXEMPT_SECRET }),
    );
    const b = await bodyOf(
      await post({ url, payment_required: buildPaymentRequired() }, { 'x-service-key': EXEMPT_SECRET }),
    );
    expect((a.sent_challenge as Record<string, string>).payment_required_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(a.sent_challenge).toEqual(b.sent_challenge);
  });

  it('gives free, paid, exempt and hosted callers the same verdict and terms hash', async () => {
    for (const required of [buildPaymentRequired(), evilRequired]) {
      const query = { url, payment_required: toBase64(JSON.stringify(required)) };
      const answers = [
        await bodyOf(await get(query)),
        await bodyOf(await get(query, { 'payment-signature': await paymentFor() })),
        await bodyOf(await get(query, { 'x-service-key': EXEMPT_SECRET })),
        await bodyOf(await get(query, { authorization: `Bearer ${hostedKey}` })),
      ];
      expect(answers.map((answer) => (answer.access as { tier: string }).tier)).toEqual([
        'free',
        'paid',
        'exempt',
        'hosted',
      ]);
      const seen = answers.map((answer) => ({
        verdict: answer.verdict,
        reason_code: answer.reason_code,
        payment_terms_sha256: answer.payment_terms_sha256,
        sent_challenge: answer.sent_challenge,
      }));
      for (const each of seen) expect(each).toEqual(seen[0]);
      expect(seen[0]?.verdict).toBe(required === evilRequired ? 'skip' : 'pay');
      if (required === evilRequired) expect(seen[0]?.reason_code).toBe('challenge_mismatch');
    }
  });

  it('skips a challenge asking another wallet or price than the endpoint shows Spotcheck', async () => {
    for (const change of [{ payTo: EVIL }, { amount: '20000' }]) {
      const answer = await bodyOf(
        await post(
          { url, payment_required: buildPaymentRequired({ accepts: [buildAccept(change)] }) },
          { 'x-service-key': EXEMPT_SECRET },
        ),
      );
      expect(answer).toMatchObject({
        verdict: 'skip',
        reason: 'challenge_mismatch',
        payment: null,
        payment_terms_sha256: null,
      });
    }
  });

  it('publishes the members and the code', async () => {
    const doc = await bodyOf(await appFetch(spot.service, '/openapi.json'));
    const text = JSON.stringify(doc);
    for (const word of ['payment_required', 'selected_requirement', 'payment_required_resource_mismatch']) {
      expect(text.includes(word), word).toBe(true);
    }
    const rules = await bodyOf(await appFetch(spot.service, '/rules.json'));
    expect(JSON.stringify(rules.reasons)).toContain('challenge_mismatch');
  });
});

/** A `PAYMENT-SIGNATURE` for the check's own offer, read from the 402 of a caller whose free checks are spent. */
async function paymentFor(): Promise<string> {
  const client = x402Client.fromConfig({ schemes: [{ network: BASE, client: new ExactEvmScheme(BUYER) }] });
  let unpaid: Response | null = null;
  const spent = '192.0.2.200';
  for (let i = 0; i < 6 && unpaid?.status !== 402; i++) {
    unpaid = await appFetch(spot.service, `${PATH}?${new URLSearchParams({ url })}`, { ip: spent });
  }
  expect(unpaid?.status).toBe(402);
  const required = decodePaymentRequiredHeader(unpaid?.headers.get('payment-required') ?? '');
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}
