import { describe, expect, it } from 'vitest';
import { observationOf, payToChanged, summarizeHistory } from '../../../core/history.ts';
import { LIMITS } from '../../../core/limits.ts';
import type { Accept, Challenge, Decision, Observation, ProbeOutcome } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';

const A = '0xAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const NOW = new Date('2026-03-31T12:00:00.000Z');
const day = (n: number) => new Date(NOW.getTime() - n * 86_400_000).toISOString();

function terms(observedAt: string, overrides: Partial<Observation> = {}): Observation {
  return {
    observed_at: observedAt,
    http_status: 402,
    price_usd: 0.01,
    amount_atomic: '10000',
    network: BASE,
    asset: BASE_USDC,
    pay_to: A,
    ...overrides,
  };
}

function blank(observedAt: string): Observation {
  return {
    observed_at: observedAt,
    http_status: null,
    price_usd: null,
    amount_atomic: null,
    network: null,
    asset: null,
    pay_to: null,
  };
}

describe('summarizeHistory', () => {
  it('is empty for no observations', () => {
    expect(summarizeHistory([], NOW)).toEqual({
      observations: 0,
      stable_for_days: null,
      stable_since: null,
      last_changed: null,
      drift: null,
    });
  });

  it('has no terms to summarize when every observation failed', () => {
    expect(summarizeHistory([blank(day(1)), blank(day(2))], NOW)).toEqual({
      observations: 2,
      stable_for_days: null,
      stable_since: null,
      last_changed: null,
      drift: null,
    });
  });

  it('one observation: stable since it, never changed, nothing to drift from', () => {
    expect(summarizeHistory([terms(day(3))], NOW)).toEqual({
      observations: 1,
      stable_for_days: 3,
      stable_since: day(3),
      last_changed: null,
      drift: null,
    });
  });

  it('unchanged terms: stable since the oldest kept, never changed', () => {
    const history = [terms(day(0)), terms(day(2)), terms(day(9.5))];
    expect(summarizeHistory(history, NOW)).toEqual({
      observations: 3,
      stable_for_days: 9,
      stable_since: day(9.5),
      last_changed: null,
      drift: false,
    });
  });

  it('a price change: stable since the change, drift on the newest', () => {
    const history = [terms(day(1), { amount_atomic: '20000' }), terms(day(4)), terms(day(8))];
    expect(summarizeHistory(history, NOW)).toEqual({
      observations: 3,
      stable_for_days: 1,
      stable_since: day(1),
      last_changed: day(1),
      drift: true,
    });
  });

  it('an older change: no drift now, last_changed where current terms began', () => {
    const history = [terms(day(1)), terms(day(2)), terms(day(5), { pay_to: B }), terms(day(6))];
    expect(summarizeHistory(history, NOW)).toMatchObject({
      stable_since: day(2),
      last_changed: day(2),
      stable_for_days: 2,
      drift: false,
    });
  });

  it('observations without terms do not reset stability or count as drift', () => {
    const history = [blank(day(0)), terms(day(1)), blank(day(2)), terms(day(7)), blank(day(8))];
    expect(summarizeHistory(history, NOW)).toEqual({
      observations: 5,
      stable_for_days: 7,
      stable_since: day(7),
      last_changed: null,
      drift: false,
    });
  });

  it('compares 0x values case-insensitively and networks exactly', () => {
    const same = [
      terms(day(1), { pay_to: A.toLowerCase(), asset: BASE_USDC.toUpperCase().replace('0X', '0x') }),
      terms(day(2)),
    ];
    expect(summarizeHistory(same, NOW).drift).toBe(false);
    expect(summarizeHistory([terms(day(1), { network: 'eip155:1' }), terms(day(2))], NOW).drift).toBe(true);
    expect(
      summarizeHistory([terms(day(1), { asset: 'other' }), terms(day(2), { asset: 'OTHER' })], NOW).drift,
    ).toBe(true);
  });

  it(`keeps only the newest ${LIMITS.historyKept}`, () => {
    const history = Array.from({ length: 40 }, (_, i) => terms(day(i), i >= 30 ? { pay_to: B } : {}));
    expect(summarizeHistory(history, NOW)).toEqual({
      observations: 30,
      stable_for_days: 29,
      stable_since: day(29),
      last_changed: null,
      drift: false,
    });
  });

  it('never reports negative days and fails soft on a bad date', () => {
    expect(summarizeHistory([terms('2026-04-05T00:00:00.000Z')], NOW).stable_for_days).toBe(0);
    expect(summarizeHistory([terms('not a date')], NOW).stable_for_days).toBeNull();
  });
});

describe('payToChanged', () => {
  it('is null with nothing to compare', () => {
    expect(payToChanged([], terms(day(0)))).toBeNull();
    expect(payToChanged([blank(day(1))], terms(day(0)))).toBeNull();
    expect(payToChanged([terms(day(1), { network: 'eip155:1', pay_to: B })], terms(day(0)))).toBeNull();
    expect(payToChanged([terms(day(1))], blank(day(0)))).toBeNull();
  });

  it('compares with the newest previous wallet on the same network', () => {
    expect(payToChanged([terms(day(1), { pay_to: B })], terms(day(0)))).toBe(true);
    expect(payToChanged([terms(day(1), { pay_to: A.toLowerCase() })], terms(day(0)))).toBe(false);
    const previous = [
      blank(day(1)),
      terms(day(2), { network: 'eip155:1', pay_to: B }),
      terms(day(3)),
      terms(day(4), { pay_to: B }),
    ];
    expect(payToChanged(previous, terms(day(0)))).toBe(false);
  });
});

describe('observationOf', () => {
  const accept: Accept = {
    scheme: 'exact',
    network: BASE,
    amount: '25000',
    asset: BASE_USDC,
    payTo: A,
    maxTimeoutSeconds: 300,
    validBefore: null,
    extra: null,
  };
  const challenge: Challenge = {
    version: 2,
    source: 'header',
    lenient: false,
    accepts: [accept],
    resource: null,
    notes: [],
  };
  const decision: Decision = {
    verdict: 'pay',
    reason: 'price_ok',
    option: accept,
    challenge,
    freeTrialRemaining: null,
    expectedPayTo: A,
    expectedNetwork: BASE,
    expectedSource: 'request',
    expiry: null,
  };
  const response: ProbeOutcome = {
    kind: 'response',
    response: {
      status: 402,
      headers: {},
      body: null,
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: 'https://x',
      redirects: 0,
    },
    probedAt: day(0),
    elapsedMs: 20,
  };

  it('takes the terms of the decided option', () => {
    expect(observationOf(response, decision)).toEqual({
      observed_at: day(0),
      http_status: 402,
      price_usd: 0.025,
      amount_atomic: '25000',
      network: BASE,
      asset: BASE_USDC,
      pay_to: A,
    });
  });

  it('has no terms when the challenge did not decode or there was no response', () => {
    const timeout: ProbeOutcome = { kind: 'timeout', detail: 't', probedAt: day(0), elapsedMs: 5000 };
    expect(
      observationOf(timeout, {
        ...decision,
        verdict: 'recheck',
        reason: 'timeout',
        option: null,
        challenge: null,
      }),
    ).toEqual(blank(day(0)));
    expect(observationOf(response, { ...decision, challenge: null })).toMatchObject({
      http_status: 402,
      amount_atomic: null,
      pay_to: null,
      price_usd: null,
    });
  });

  it("has a null price when the asset is not the network's USDC (a DAI seller is not 10^10 USD)", () => {
    const dai = {
      ...accept,
      asset: '0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb',
      amount: '1000000000000000000',
    };
    expect(observationOf(response, { ...decision, option: dai }).price_usd).toBeNull();
  });

  it('has a null price where the network has no known USDC', () => {
    const other = { ...accept, network: 'eip155:999999' };
    expect(observationOf(response, { ...decision, option: other }).price_usd).toBeNull();
  });
});
