import { describe, expect, it } from 'vitest';
import { type PaidCallRecord, paidCallRecord } from '../../../core/catalog.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import {
  type HostCheck,
  type HostObservation,
  REPUTATION_FORMULA,
  type ReputationInput,
  reputation,
} from '../../../core/reputation.ts';

const NOW = new Date('2026-11-30T00:00:00.000Z');
const A = 'GET https://api.example/a';
const B = 'GET https://api.example/b';
const day = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();

function obs(
  endpoint: string,
  daysAgo: number,
  terms: { amount?: string; payTo?: string } | null = {},
): HostObservation {
  return {
    endpoint,
    observed_at: day(daysAgo),
    http_status: terms === null ? null : 402,
    price_usd: terms === null ? null : 0.01,
    amount_atomic: terms === null ? null : (terms.amount ?? '10000'),
    network: terms === null ? null : BASE,
    asset: terms === null ? null : BASE_USDC,
    pay_to: terms === null ? null : (terms.payTo ?? '0x1111111111111111111111111111111111111111'),
  };
}
const check = (reason: string, daysAgo = 1, source: HostCheck['expected_source'] = 'listing'): HostCheck => ({
  verdict: reason.startsWith('price_') && !reason.endsWith('mismatch') ? 'pay' : 'skip',
  reason,
  at: day(daysAgo),
  expected_source: source,
});
const paid = (daysAgo: number, extra: Partial<PaidCallRecord> = {}) =>
  paidCallRecord({
    endpoint_url: 'https://api.example/a',
    task: 'fx-rate',
    called_at: day(daysAgo),
    price_atomic: '10000',
    network: BASE,
    pay_to: '0x1111111111111111111111111111111111111111',
    settlement_tx: '0xabc',
    delivered: true,
    known_answer: 'pass',
    http_status: 200,
    ...extra,
  });
const input = (over: Partial<ReputationInput>): ReputationInput => ({
  host: 'api.example',
  observations: [],
  checks: [],
  paidCalls: [],
  now: NOW,
  ...over,
});

describe('reputation', () => {
  it('scores each component and their weighted mean', () => {
    const observations = [
      obs(A, 1),
      obs(B, 1, null), // a timeout: not available, no effect on stability
      obs(A, 2, { amount: '20000' }), // A changed between day 2 and day 1
      obs(B, 3),
      obs(A, 4, { amount: '20000' }),
      obs(B, 5),
      obs(A, 6, { amount: '20000' }),
      obs(B, 7),
    ];
    const checks = [check('price_ok'), check('price_ok'), check('price_ok'), check('pay_to_mismatch')];
    const paidCalls = [
      paid(1),
      paid(2, { known_answer: 'fail' }),
      paid(3, { delivered: false, known_answer: null }),
    ];
    const result = reputation(input({ observations, checks, paidCalls }));
    expect(result.breakdown).toEqual({
      availability: { value: 0.875, weight: 0.25, samples: 8 },
      // A: 20000→20000→20000→10000 gives 2 stable of 3; B: 3 stable of 2 pairs (the timeout is skipped).
      stability: { value: 0.8, weight: 0.2, samples: 5 },
      honesty: { value: 0.75, weight: 0.25, samples: 4 },
      delivery: { value: 0.6667, weight: 0.15, samples: 3 },
      known_answers: { value: 0.5, weight: 0.15, samples: 2 },
    });
    // 0.25·0.875 + 0.2·0.8 + 0.25·0.75 + 0.15·0.6667 + 0.15·0.5 = 0.7438
    expect(result.score).toBe(74);
    expect(result.provisional_score).toBe(74);
    expect(result.band).toBe('medium');
    expect(result.low_data).toBe(false);
    expect(result.confidence).toBe('low');
    expect(result.inputs).toMatchObject({
      observations: 8,
      endpoints: 2,
      checks: 4,
      checks_counted: 4,
      paid_calls: 3,
    });
  });

  it('renormalizes the weights over components with data', () => {
    const observations = [1, 2, 3, 4, 5].map((d) => obs(A, d));
    const result = reputation(input({ observations }));
    expect(result.breakdown.delivery.value).toBeNull();
    expect(result.breakdown.honesty.value).toBeNull();
    expect(result.score).toBe(100);
    expect(result.band).toBe('high');
  });

  it('has no score below five observations, but shows the provisional value', () => {
    const result = reputation(input({ observations: [obs(A, 1), obs(A, 2, null)] }));
    expect(result).toMatchObject({
      score: null,
      band: 'insufficient_data',
      low_data: true,
      provisional_score: 50,
    });
    expect(reputation(input({})).provisional_score).toBeNull();
  });

  it("does not count mismatches against a caller's expectation, nor reasons that say nothing of honesty", () => {
    const observations = [1, 2, 3, 4, 5].map((d) => obs(A, d));
    const checks = [
      check('price_ok', 1, 'request'),
      check('pay_to_mismatch', 1, 'request'),
      check('price_mismatch', 1, null),
      check('network_mismatch'),
      check('timeout'),
      check('asset_not_usdc', 1, 'request'),
    ];
    const result = reputation(input({ observations, checks }));
    expect(result.breakdown.honesty).toEqual({ value: 0.5, weight: 0.25, samples: 2 });
    expect(result.inputs).toMatchObject({ checks: 6, checks_counted: 2 });
  });

  it('reads only the last 90 days', () => {
    const observations = [...[1, 2, 3, 4, 5].map((d) => obs(A, d)), ...[91, 92].map((d) => obs(A, d, null))];
    const result = reputation(input({ observations, paidCalls: [paid(100, { delivered: false })] }));
    expect(result.inputs.observations).toBe(5);
    expect(result.inputs.since).toBe('2026-09-01T00:00:00.000Z');
    expect(result.breakdown.availability.value).toBe(1);
    expect(result.breakdown.delivery.value).toBeNull();
  });

  it('bands a poor host low and gains confidence with evidence', () => {
    const observations = Array.from({ length: 20 }, (_, i) => obs(A, i + 1, i % 4 === 0 ? {} : null));
    const paidCalls = [1, 2, 3, 4, 5].map((d) => paid(d, { delivered: false, known_answer: 'fail' }));
    const result = reputation(input({ observations, paidCalls }));
    expect(result.band).toBe('low');
    expect(result.confidence).toBe('high');
  });
});

describe('REPUTATION_FORMULA', () => {
  it('publishes weights that add up to 1 and a rule for each component', () => {
    const sum = REPUTATION_FORMULA.components.reduce((total, c) => total + c.weight, 0);
    expect(sum).toBeCloseTo(1, 10);
    expect(REPUTATION_FORMULA.components.map((c) => c.name)).toEqual([
      'availability',
      'stability',
      'honesty',
      'delivery',
      'known_answers',
    ]);
  });
});
