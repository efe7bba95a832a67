import { describe, expect, it } from 'vitest';
import type {
  Accept,
  Challenge,
  ChallengeResult,
  CheckRequest,
  Listing,
  ProbeOutcome,
} from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import type { Reason, Verdict } from '../../../core/reasons.ts';
import { REASONS } from '../../../core/reasons.ts';
import { type DecideInput, decide, expectationsOf } from '../../../core/verdict.ts';

const POLYGON = 'eip155:137';
const POLYGON_USDC = '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359';
const BASE_SEPOLIA = 'eip155:84532';
const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const GOOD = '0x1111111111111111111111111111111111111111';
const EVIL = '0x6666666666666666666666666666666666666666';
const OTHER_TOKEN = '0x2222222222222222222222222222222222222222';
const PROBED_AT = '2026-03-01T12:00:00.000Z';
const probedMs = Date.parse(PROBED_AT);
const NOW = new Date(probedMs + 5_000);
const unix = (offsetS: number) => Math.floor(probedMs / 1000) + offsetS;

function accept(overrides: Partial<Accept> = {}): Accept {
  return {
    scheme: 'exact',
    network: BASE,
    amount: '10000',
    asset: BASE_USDC,
    payTo: GOOD,
    maxTimeoutSeconds: 300,
    validBefore: null,
    extra: { name: 'USD Coin', version: '2' },
    ...overrides,
  };
}

function ok(accepts: Accept[], overrides: Partial<Challenge> = {}): ChallengeResult {
  return {
    ok: true,
    value: { version: 2, source: 'header', lenient: false, accepts, resource: null, notes: [], ...overrides },
  };
}

function response(status: number, headers: Record<string, string> = {}): ProbeOutcome {
  return {
    kind: 'response',
    response: {
      status,
      headers,
      body: null,
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: 'https://seller.example/x',
      redirects: 0,
    },
    probedAt: PROBED_AT,
    elapsedMs: 12,
  };
}

function failure(kind: 'blocked' | 'timeout' | 'unreachable'): ProbeOutcome {
  return { kind, detail: 'test', probedAt: PROBED_AT, elapsedMs: 5000 };
}

function request(overrides: Partial<CheckRequest> = {}): CheckRequest {
  return {
    url: 'https://seller.example/x',
    method: 'GET',
    claimedPrice: null,
    payTo: GOOD,
    network: null,
    checkExpiry: false,
    skewS: 30,
    ...overrides,
  };
}

function listing(overrides: Partial<Listing> = {}): Listing {
  return {
    url: 'https://seller.example/x',
    method: 'GET',
    priceUsd: null,
    network: null,
    asset: null,
    payTo: null,
    source: 'test-list',
    ...overrides,
  };
}

type Case = {
  name: string;
  input: Partial<DecideInput>;
  verdict: Verdict;
  reason: Reason;
  /** The option Decision.option must be (by identity), or null. */
  option?: Accept | null;
};

const payable = accept();
const polygonUsdc = accept({ network: POLYGON, asset: POLYGON_USDC });
const hostileFirst = accept({ network: POLYGON, asset: POLYGON_USDC, payTo: EVIL, amount: '1' });
const baseWrongWallet = accept({ payTo: EVIL, amount: '1' });
const expensive = accept({ amount: '50000' });
const cheap = accept({ amount: '9000' });
const expiredSoon = accept({ validBefore: unix(20) });
const live = accept({ validBefore: unix(600), amount: '12000' });
const trial = { 'x-free-trial-remaining': '3' };

const cases: Case[] = [
  // Rules 1–2.
  {
    name: 'ssrf gate refused the target',
    input: { outcome: failure('blocked') },
    verdict: 'skip',
    reason: 'ssrf_blocked',
    option: null,
  },
  { name: 'timeout', input: { outcome: failure('timeout') }, verdict: 'recheck', reason: 'timeout' },
  {
    name: 'unreachable',
    input: { outcome: failure('unreachable') },
    verdict: 'recheck',
    reason: 'unreachable',
  },
  {
    name: '500',
    input: { outcome: response(500), challenge: { ok: false, kind: 'absent' } },
    verdict: 'recheck',
    reason: 'server_error',
  },
  {
    name: '599',
    input: { outcome: response(599), challenge: { ok: false, kind: 'absent' } },
    verdict: 'recheck',
    reason: 'server_error',
  },
  // Ordering: rule 2 before rule 3.
  {
    name: '503 with free-trial headers',
    input: { outcome: response(503, trial), challenge: { ok: false, kind: 'absent' } },
    verdict: 'recheck',
    reason: 'server_error',
  },
  // Rule 3 on any status, before the terms are read.
  {
    name: 'free trial on a 200',
    input: { outcome: response(200, trial), challenge: { ok: false, kind: 'absent' } },
    verdict: 'recheck',
    reason: 'free_trial_active',
  },
  {
    name: 'free trial on a valid 402',
    input: { outcome: response(402, trial), challenge: ok([payable]) },
    verdict: 'recheck',
    reason: 'free_trial_active',
    option: payable,
  },
  {
    name: 'free trial beats a bad challenge',
    input: {
      outcome: response(402, { 'x-free-trial': 'true' }),
      challenge: { ok: false, kind: 'invalid', issues: [] },
    },
    verdict: 'recheck',
    reason: 'free_trial_active',
  },
  // A recognized header whose count does not parse still announces a trial (its count unknown).
  ...[
    { 'x-free-trial': 'unlimited' },
    { 'x-free-trial-remaining': 'n/a' },
    { 'x-trial-remaining': '' },
    { 'x-trial-used': '2' },
  ].map((headers) => ({
    name: `free trial announced by ${JSON.stringify(headers)} on a valid 402`,
    input: { outcome: response(402, headers), challenge: ok([payable]) },
    verdict: 'recheck' as const,
    reason: 'free_trial_active' as const,
    option: payable,
  })),
  // A header that says the trial is over announces none: the terms decide.
  ...[
    { 'x-free-trial-remaining': '0' },
    { 'x-trial-remaining': '0' },
    { 'x-trial-used': '5/5' },
    { 'x-trial-used': 'true' },
    { 'x-free-trial': 'expired' },
  ].map((headers) => ({
    name: `used-up trial ${JSON.stringify(headers)} does not count`,
    input: { outcome: response(402, headers), challenge: ok([payable]) },
    verdict: 'pay' as const,
    reason: 'price_ok' as const,
    option: payable,
  })),
  // Rule 4.
  {
    name: '200 without terms',
    input: { outcome: response(200), challenge: { ok: false, kind: 'absent' } },
    verdict: 'skip',
    reason: 'no_paywall',
  },
  {
    name: '404',
    input: { outcome: response(404), challenge: { ok: false, kind: 'absent' } },
    verdict: 'skip',
    reason: 'no_paywall',
  },
  {
    name: '402 without terms',
    input: { outcome: response(402), challenge: { ok: false, kind: 'absent' } },
    verdict: 'skip',
    reason: 'no_paywall',
  },
  {
    name: '200 whose body decoded as terms is still not a paywall',
    input: { outcome: response(200), challenge: ok([payable]) },
    verdict: 'skip',
    reason: 'no_paywall',
  },
  {
    name: 'response with a null challenge',
    input: { outcome: response(402), challenge: null },
    verdict: 'skip',
    reason: 'no_paywall',
  },
  // Rule 5.
  {
    name: 'invalid terms',
    input: { challenge: { ok: false, kind: 'invalid', issues: [] } },
    verdict: 'skip',
    reason: 'bad_challenge',
    option: null,
  },
  { name: 'no options', input: { challenge: ok([]) }, verdict: 'skip', reason: 'bad_challenge' },
  {
    name: 'decimal amount is never guessed',
    input: { challenge: ok([accept({ amount: '0.01' })]) },
    verdict: 'skip',
    reason: 'bad_challenge',
  },
  {
    name: 'one bad amount spoils the challenge',
    input: { challenge: ok([accept({ amount: '1.5' }), payable]) },
    verdict: 'skip',
    reason: 'bad_challenge',
  },
  // Rule 6.
  {
    name: 'testnet only',
    input: { challenge: ok([accept({ network: BASE_SEPOLIA, asset: BASE_SEPOLIA_USDC })]) },
    verdict: 'skip',
    reason: 'network_unsupported',
  },
  {
    name: 'unknown network only',
    input: { challenge: ok([accept({ network: 'eip155:999999' })]) },
    verdict: 'skip',
    reason: 'network_unsupported',
  },
  {
    name: 'mainnet, but not the expected one',
    input: { challenge: ok([polygonUsdc]) },
    verdict: 'skip',
    reason: 'network_mismatch',
    option: polygonUsdc,
  },
  {
    name: 'caller expects a testnet',
    input: {
      request: request({ network: BASE_SEPOLIA }),
      challenge: ok([payable, accept({ network: BASE_SEPOLIA, asset: BASE_SEPOLIA_USDC })]),
    },
    verdict: 'skip',
    reason: 'network_unsupported',
  },
  // Rule 7.
  {
    name: 'Base, but not USDC',
    input: { challenge: ok([accept({ asset: OTHER_TOKEN })]) },
    verdict: 'skip',
    reason: 'asset_not_usdc',
  },
  {
    name: 'USDC of another network on Base',
    input: { challenge: ok([accept({ asset: POLYGON_USDC })]) },
    verdict: 'skip',
    reason: 'asset_not_usdc',
  },
  // Ordering: rule 7 before rule 8.
  {
    name: 'wrong asset and wrong wallet',
    input: { challenge: ok([accept({ asset: OTHER_TOKEN, payTo: EVIL })]) },
    verdict: 'skip',
    reason: 'asset_not_usdc',
  },
  // Rule 8.
  {
    name: "wallet differs from the caller's",
    input: { challenge: ok([baseWrongWallet]) },
    verdict: 'skip',
    reason: 'pay_to_mismatch',
    option: baseWrongWallet,
  },
  {
    name: "wallet differs from the listing's",
    input: {
      request: request({ payTo: null }),
      listing: listing({ payTo: GOOD }),
      challenge: ok([baseWrongWallet]),
    },
    verdict: 'skip',
    reason: 'pay_to_mismatch',
  },
  {
    name: "caller's wallet wins over the listing's",
    input: {
      request: request({ payTo: EVIL }),
      listing: listing({ payTo: GOOD }),
      challenge: ok([baseWrongWallet]),
    },
    verdict: 'pay',
    reason: 'price_ok',
    option: baseWrongWallet,
  },
  {
    name: 'checksum casing is not a mismatch',
    input: { request: request({ payTo: GOOD.toUpperCase().replace('0X', '0x') }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  {
    name: 'no expected wallet: nothing to mismatch',
    input: { request: request({ payTo: null }), challenge: ok([baseWrongWallet]) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  // Ordering: rule 8 before rule 9.
  {
    name: 'wrong wallet and too expensive',
    input: { request: request({ claimedPrice: '0.001' }), challenge: ok([baseWrongWallet]) },
    verdict: 'skip',
    reason: 'pay_to_mismatch',
  },
  // Rule 9, at the boundary.
  {
    name: 'quote equals the claim',
    input: { request: request({ claimedPrice: '0.01' }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  {
    name: 'quote one atomic unit above the claim',
    input: { request: request({ claimedPrice: '0.009999' }) },
    verdict: 'skip',
    reason: 'price_mismatch',
  },
  {
    name: 'claim with more decimals than USDC, above the quote',
    input: { request: request({ claimedPrice: '0.0100001' }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  {
    name: 'claim with more decimals than USDC, below the quote',
    input: { request: request({ claimedPrice: '0.0099999' }) },
    verdict: 'skip',
    reason: 'price_mismatch',
  },
  {
    name: 'claim in exponent form',
    input: { request: request({ claimedPrice: '1e-2' }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  {
    name: 'unreadable claim fails closed',
    input: { request: request({ claimedPrice: 'cheap' }) },
    verdict: 'skip',
    reason: 'price_mismatch',
    option: payable,
  },
  {
    name: 'quote above the listing',
    input: { listing: listing({ priceUsd: 0.005 }) },
    verdict: 'skip',
    reason: 'price_mismatch',
  },
  {
    name: 'listing below a tiny exponent price',
    input: { listing: listing({ priceUsd: 1e-7 }), challenge: ok([accept({ amount: '1' })]) },
    verdict: 'skip',
    reason: 'price_mismatch',
  },
  {
    name: 'claim fine but listing lower',
    input: { request: request({ claimedPrice: '1' }), listing: listing({ priceUsd: 0.009 }) },
    verdict: 'skip',
    reason: 'price_mismatch',
  },
  {
    name: 'listing price NaN is ignored',
    input: { listing: listing({ priceUsd: Number.NaN }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  {
    name: 'negative listing price is ignored',
    input: { listing: listing({ priceUsd: -1 }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  // Ordering: rule 9 before rule 10.
  {
    name: 'too expensive and expired',
    input: { request: request({ claimedPrice: '0.001', checkExpiry: true }), challenge: ok([expiredSoon]) },
    verdict: 'skip',
    reason: 'price_mismatch',
  },
  // Rule 10.
  {
    name: 'expired, check asked',
    input: { request: request({ checkExpiry: true }), challenge: ok([expiredSoon]) },
    verdict: 'skip',
    reason: 'challenge_expired',
    option: expiredSoon,
  },
  {
    name: 'expired, check not asked',
    input: { challenge: ok([expiredSoon]) },
    verdict: 'pay',
    reason: 'price_ok',
    option: expiredSoon,
  },
  {
    name: 'expiry exactly at now + skew',
    input: { request: request({ checkExpiry: true }), challenge: ok([accept({ validBefore: unix(35) })]) },
    verdict: 'skip',
    reason: 'challenge_expired',
  },
  {
    name: 'expiry one second after now + skew',
    input: { request: request({ checkExpiry: true }), challenge: ok([accept({ validBefore: unix(36) })]) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  {
    name: 'expired cheap option skipped for a live one',
    input: { request: request({ checkExpiry: true }), challenge: ok([expiredSoon, live]) },
    verdict: 'pay',
    reason: 'price_ok',
    option: live,
  },
  {
    name: 'approved option expired while a hostile Base USDC option is live',
    input: {
      request: request({ checkExpiry: true }),
      challenge: ok([accept({ payTo: EVIL, validBefore: unix(3600) }), expiredSoon]),
    },
    verdict: 'skip',
    reason: 'challenge_expired',
  },
  // Rule 12.
  {
    name: 'quote below the listing',
    input: { listing: listing({ priceUsd: 0.02 }) },
    verdict: 'pay',
    reason: 'price_below_listing',
  },
  {
    name: 'quote equals the listing',
    input: { listing: listing({ priceUsd: 0.01 }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  {
    name: 'below the claim but no listing',
    input: { request: request({ claimedPrice: '0.05' }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
  // Several options in one challenge.
  {
    name: 'hostile first option on another network with a wrong wallet',
    input: { challenge: ok([hostileFirst, payable]) },
    verdict: 'pay',
    reason: 'price_ok',
    option: payable,
  },
  {
    name: 'first option Base USDC with a wrong wallet, second correct',
    input: { challenge: ok([baseWrongWallet, payable]) },
    verdict: 'pay',
    reason: 'price_ok',
    option: payable,
  },
  {
    name: 'first option in another token on Base, second USDC',
    input: { challenge: ok([accept({ asset: OTHER_TOKEN, amount: '1' }), payable]) },
    verdict: 'pay',
    reason: 'price_ok',
    option: payable,
  },
  {
    name: 'first option too expensive, second within the claim',
    input: { request: request({ claimedPrice: '0.01' }), challenge: ok([expensive, payable]) },
    verdict: 'pay',
    reason: 'price_ok',
    option: payable,
  },
  {
    name: 'cheapest payable option is approved',
    input: { challenge: ok([payable, cheap]) },
    verdict: 'pay',
    reason: 'price_ok',
    option: cheap,
  },
  {
    name: 'every option too expensive reports the cheapest',
    input: { request: request({ claimedPrice: '0.001' }), challenge: ok([expensive, payable]) },
    verdict: 'skip',
    reason: 'price_mismatch',
    option: payable,
  },
  // Expectations from the listing and from v1 names.
  {
    name: "listing's network",
    input: {
      request: request({ payTo: null }),
      listing: listing({ network: POLYGON, payTo: GOOD }),
      challenge: ok([payable, polygonUsdc]),
    },
    verdict: 'pay',
    reason: 'price_ok',
    option: polygonUsdc,
  },
  {
    name: 'v1 network name in the request',
    input: { request: request({ network: 'base' }) },
    verdict: 'pay',
    reason: 'price_ok',
  },
];

function run(input: Partial<DecideInput>) {
  return decide({
    outcome: response(402),
    challenge: ok([payable]),
    request: request(),
    listing: null,
    now: NOW,
    ...input,
  });
}

describe('decide', () => {
  it.each(cases)('$name → $verdict/$reason', ({ input, verdict, reason, option }) => {
    const decision = run(input);
    expect({ verdict: decision.verdict, reason: decision.reason }).toEqual({ verdict, reason });
    if (option !== undefined) expect(decision.option).toBe(option);
  });

  it('covers every reason code but the one of a sent challenge (test/unit/core/challenge-bound.test.ts)', () => {
    const covered = new Set<string>([...cases.map((c) => c.reason), 'challenge_mismatch']);
    expect(REASONS.filter((r) => !covered.has(r))).toEqual([]);
  });

  it('reports the free-trial count', () => {
    expect(
      run({ outcome: response(200, trial), challenge: { ok: false, kind: 'absent' } }).freeTrialRemaining,
    ).toBe(3);
    expect(run({ outcome: response(200, { 'x-free-trial': '1' }) }).freeTrialRemaining).toBeNull();
    expect(run({}).freeTrialRemaining).toBeNull();
  });

  it('announces a trial whose count does not parse, with no count', () => {
    for (const value of ['unlimited', 'n/a', '']) {
      const decision = run({ outcome: response(402, { 'X-Free-Trial-Remaining': value }) });
      expect(decision, value).toMatchObject({
        verdict: 'recheck',
        reason: 'free_trial_active',
        freeTrialRemaining: null,
      });
    }
  });

  it('keeps the decoded challenge and the expectations', () => {
    const challenge = ok([payable]);
    const decision = run({ challenge });
    expect(decision.challenge).toBe(challenge.ok ? challenge.value : null);
    expect(decision).toMatchObject({ expectedPayTo: GOOD, expectedNetwork: BASE, expectedSource: 'request' });
    expect(run({ outcome: failure('timeout'), challenge: null }).challenge).toBeNull();
  });

  it('fills the expiry block only when asked, whatever the verdict', () => {
    expect(run({}).expiry).toBeNull();
    expect(run({ request: request({ checkExpiry: true }) }).expiry).toMatchObject({
      options_considered: 1,
      expired: false,
      expiry_source: 'maxTimeoutSeconds',
      latest_expiry: new Date(probedMs + 300_000).toISOString(),
      checked_at: NOW.toISOString(),
    });
    expect(
      run({ outcome: failure('timeout'), challenge: null, request: request({ checkExpiry: true }) }).expiry,
    ).toMatchObject({ options_considered: 0, expired: false });
  });
});

describe('expectationsOf', () => {
  it.each([
    [request({ payTo: null }), null, { network: BASE, payTo: null, source: null }],
    [request({ payTo: GOOD }), null, { network: BASE, payTo: GOOD, source: 'request' }],
    [request({ payTo: null }), listing({ payTo: EVIL }), { network: BASE, payTo: EVIL, source: 'listing' }],
    [request({ payTo: null }), listing({ priceUsd: 1 }), { network: BASE, payTo: null, source: null }],
    [
      request({ payTo: null, network: POLYGON }),
      listing({ payTo: EVIL, network: BASE }),
      { network: POLYGON, payTo: EVIL, source: 'request' },
    ],
    [
      request({ payTo: null }),
      listing({ network: 'polygon' }),
      { network: POLYGON, payTo: null, source: 'listing' },
    ],
  ] as const)('%#', (req, list, expected) => {
    expect(expectationsOf(req, list)).toEqual(expected);
  });
});
