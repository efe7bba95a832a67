import { describe, expect, it } from 'vitest';
import { assembleCheck, type CheckInput } from '../../../core/check-answer.ts';
import type { ProbeOutcome } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { buildAccept, buildV2Header, PAY_TO } from '../../fixtures/challenge.ts';
import { outcomeOf402 } from '../../fixtures/probe.ts';

const URL_ = 'https://api.example.test/weather/paris';
const NOW = new Date('2026-11-24T01:00:00.000Z');
const ID = 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa';

function input(overrides: Partial<CheckInput> = {}): CheckInput {
  return {
    outcome: { ...outcomeOf402(URL_), probedAt: NOW.toISOString() },
    cached: false,
    cacheTtlS: 300,
    request: {
      url: URL_,
      method: 'GET',
      claimedPrice: null,
      payTo: PAY_TO,
      network: null,
      checkExpiry: false,
      skewS: 30,
    },
    mode: 'live',
    checkType: 'dry-run',
    listing: null,
    previous: [],
    now: NOW,
    id: ID,
    baseUrl: 'https://spotcheck.example',
    context: { client: 'c', ref: null },
    ...overrides,
  };
}

describe('assembleCheck', () => {
  it('assembles a pay: answer, terms hash, payment and an unsigned receipt carrying the context', () => {
    const check = assembleCheck(input());
    expect(check.decision.verdict).toBe('pay');
    expect(check.full).toMatchObject({
      verdict: 'pay',
      reason: 'price_ok',
      quoted_price_usd: 0.01,
      pay_to: PAY_TO,
      network: BASE,
      asset: BASE_USDC,
      expected_source: 'request',
      receipt_url: `https://spotcheck.example/v1/receipts/${ID}`,
      confidence: 'high',
      payment: { amount: { atomic: '10000', usd: 0.01 } },
    });
    expect(check.full['payment_terms_sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(check.unsigned).toMatchObject({
      id: ID,
      type: 'check',
      issued_at: NOW.toISOString(),
      client: 'c',
      http_status: 402,
    });
    expect(check.unsigned).not.toHaveProperty('access');
    expect(check.free).toEqual({
      verdict: 'pay',
      reason: 'The live payment terms match what was expected and the price is acceptable.',
      payment_terms_sha256: check.full['payment_terms_sha256'],
      receipt_id: ID,
      receipt_url: `https://spotcheck.example/v1/receipts/${ID}`,
      pay_to_changed: null,
      reason_code: 'price_ok',
      check_type: 'dry-run',
    });
    expect(check.observation).toMatchObject({ amount_atomic: '10000', pay_to: PAY_TO });
  });

  it('keeps the paid detail out of the free receipt: the free answer, the reason code and the public-state inputs', () => {
    const check = assembleCheck(
      input({ request: { ...input().request, checkExpiry: true, claimedPrice: '0.01' } }),
    );
    expect(check.unsigned).toHaveProperty('payment');
    expect(check.unsigned).toHaveProperty('quality');
    for (const member of [
      'payment',
      'quality',
      'expiry_check',
      'confidence',
      'history',
      'history_observations',
    ])
      expect(check.freeUnsigned).not.toHaveProperty(member);
    expect(check.freeUnsigned).toMatchObject({
      id: ID,
      type: 'check',
      client: 'c',
      verdict: check.decision.verdict,
      reason: check.decision.reason,
      reason_code: check.decision.reason,
      payment_terms_sha256: check.free.payment_terms_sha256,
      expected_source: 'request',
      claimed_price_usd: 0.01,
      check_expiry: true,
    });
  });

  it('never approves in a dry run, and keeps no observation of a reused probe', () => {
    const check = assembleCheck(input({ mode: 'dry-run', cached: true, checkType: 'self-checked' }));
    expect(check.full).toMatchObject({
      verdict: 'pay',
      payment: null,
      payment_terms_sha256: null,
      check_type: 'dry-run',
    });
    expect(check.observation).toBeNull();
  });

  it('holds the seller to a listing and reports no USD price for an asset that is not USDC', () => {
    const dai = '0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb';
    const header = buildV2Header({ accepts: [buildAccept({ asset: dai, amount: '1000000000000000000' })] });
    const base = input().outcome as Extract<ProbeOutcome, { kind: 'response' }>;
    const outcome: ProbeOutcome = {
      ...base,
      response: { ...base.response, headers: { 'payment-required': header } },
    };
    const listing = {
      url: URL_,
      method: 'GET' as const,
      priceUsd: 0.01,
      network: BASE,
      asset: null,
      payTo: PAY_TO,
      source: 'cdp',
    };
    const request = { ...input().request, payTo: null };
    const check = assembleCheck(input({ outcome, listing, request }));
    expect(check.full).toMatchObject({
      verdict: 'skip',
      reason: 'asset_not_usdc',
      quoted_price_usd: null,
      expected_source: 'listing',
    });
  });

  it('names the POST in probe.method_used only when the listed GET answered 405 and the 402 came from POST', () => {
    const base = input().outcome as Extract<ProbeOutcome, { kind: 'response' }>;
    const answered = (status: number, methodUsed: 'GET' | 'POST'): ProbeOutcome => ({
      ...base,
      response: { ...base.response, status, methodUsed, ...(status === 402 ? {} : { headers: {} }) },
    });
    const probeOf = (outcome: ProbeOutcome, method: 'GET' | 'POST' = 'GET') => {
      const check = assembleCheck(input({ outcome, request: { ...input().request, method } }));
      return [check.full['probe'], check.unsigned['probe'], check.freeUnsigned['probe']];
    };
    for (const probe of probeOf(answered(402, 'POST'))) expect(probe).toMatchObject({ method_used: 'POST' });
    // A POST retry that answered anything but a 402 never reports a method, whichever response the prober gave.
    for (const status of [404, 405, 200, 500])
      for (const probe of probeOf(answered(status, 'POST')))
        expect(probe, String(status)).not.toHaveProperty('method_used');
    for (const probe of [...probeOf(answered(402, 'GET')), ...probeOf(answered(402, 'POST'), 'POST')])
      expect(probe).not.toHaveProperty('method_used');
  });

  it('answers a free trial whose count does not parse with free_trial_remaining null, in the answer and receipt', () => {
    const base = input().outcome as Extract<ProbeOutcome, { kind: 'response' }>;
    const outcome: ProbeOutcome = {
      ...base,
      response: { ...base.response, headers: { ...base.response.headers, 'x-free-trial': 'unlimited' } },
    };
    const check = assembleCheck(input({ outcome }));
    for (const answer of [check.full, check.unsigned]) {
      expect(answer).toMatchObject({ verdict: 'recheck', reason: 'free_trial_active', payment: null });
      expect(answer).toHaveProperty('free_trial_remaining', null);
    }
    expect(check.free).toMatchObject({
      verdict: 'recheck',
      reason_code: 'free_trial_active',
      payment_terms_sha256: null,
    });
  });
});
