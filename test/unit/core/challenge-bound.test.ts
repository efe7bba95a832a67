/**
 * The verdict on a challenge the client received (`core/challenge-bound.ts`): the live probe's own failures stand,
 * and a live `pay` becomes `pay` for the sent requirement only when that requirement passes the rules and its four
 * terms are among the live options; else `skip`/`challenge_mismatch`. Also the whole assembled check: payment and
 * terms hash describe the sent requirement, history never records it, and without a challenge nothing changes.
 */
import { describe, expect, it } from 'vitest';
import { decideOnSentChallenge, type SentCheck } from '../../../core/challenge-bound.ts';
import { assembleCheck, type CheckInput, readOutcome } from '../../../core/check-answer.ts';
import type { Accept, CheckRequest, Decision, ProbeOutcome } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { paymentTermsSha256 } from '../../../core/payment.ts';
import { isPublicState } from '../../../core/public-state.ts';
import type { SentChallenge } from '../../../core/sent-challenge.ts';
import { decide } from '../../../core/verdict.ts';

const GOOD = '0x1111111111111111111111111111111111111111';
const EVIL = '0x6666666666666666666666666666666666666666';
const POLYGON = 'eip155:137';
const POLYGON_USDC = '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359';
const PROBED_AT = '2026-03-01T12:00:00.000Z';
const NOW = new Date(Date.parse(PROBED_AT) + 60_000);

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

/** A 402 whose PAYMENT-REQUIRED header carries `accepts`, as the probe sees it. */
function outcome(accepts: Accept[], status = 402): ProbeOutcome {
  const required = { x402Version: 2, resource: { url: 'https://seller.example/x' }, accepts };
  return {
    kind: 'response',
    response: {
      status,
      headers: { 'payment-required': Buffer.from(JSON.stringify(required)).toString('base64') },
      body: '{}',
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: 'https://seller.example/x',
      redirects: 0,
    },
    probedAt: PROBED_AT,
    elapsedMs: 12,
  };
}

function request(overrides: Partial<CheckRequest> = {}): CheckRequest {
  return {
    url: 'https://seller.example/x',
    method: 'GET',
    claimedPrice: null,
    payTo: null,
    network: null,
    checkExpiry: false,
    skewS: 30,
    ...overrides,
  };
}

function sent(accepts: Accept[], selected: Accept | null = null): SentCheck {
  const challenge: SentChallenge = { accepts, resources: [], sha256: 'a'.repeat(64) };
  return { challenge, selected };
}

function live(accepts: Accept[], req = request()): Decision {
  const probe = outcome(accepts);
  return decide({
    outcome: probe,
    challenge: readOutcome(probe).challenge,
    request: req,
    listing: null,
    now: NOW,
  });
}

function input(probe: ProbeOutcome, extra: Partial<CheckInput> = {}): CheckInput {
  return {
    outcome: probe,
    cached: false,
    cacheTtlS: 300,
    request: request(),
    mode: 'live',
    checkType: 'dry-run',
    listing: null,
    previous: [],
    now: NOW,
    id: 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa',
    baseUrl: 'https://spotcheck.example',
    context: { task: null, client: null, ref: null },
    ...extra,
  };
}

function bound(liveAccepts: Accept[], sentCheck: SentCheck, req = request()) {
  return decideOnSentChallenge({
    live: live(liveAccepts, req),
    sent: sentCheck,
    request: req,
    listing: null,
    now: NOW,
  });
}

describe('decideOnSentChallenge', () => {
  it('pays the requirement the client will sign when it is what the probe sees', () => {
    const { decision } = bound([accept()], sent([accept()]));
    expect({ verdict: decision.verdict, reason: decision.reason }).toEqual({
      verdict: 'pay',
      reason: 'price_ok',
    });
    expect(decision.option).toEqual(accept());
  });

  it('compares addresses case-insensitively and v1 network names as CAIP-2', () => {
    const sentOption = accept({
      payTo: GOOD.toUpperCase().replace('0X', '0x'),
      asset: BASE_USDC.toLowerCase(),
    });
    expect(bound([accept()], sent([sentOption], sentOption)).decision.verdict).toBe('pay');
  });

  it.each([
    ['another wallet', { payTo: EVIL }],
    ['a higher price', { amount: '20000' }],
    ['a lower price', { amount: '5000' }],
  ])('skips a sent requirement with %s than the probe sees (challenge_mismatch)', (_name, change) => {
    const altered = accept(change);
    for (const check of [sent([altered]), sent([accept(), altered], altered)]) {
      const { decision, requirement } = bound([accept()], check);
      expect({ verdict: decision.verdict, reason: decision.reason }).toEqual({
        verdict: 'skip',
        reason: 'challenge_mismatch',
      });
      expect(requirement).toEqual(altered);
      expect(decision.option).toEqual(altered);
    }
  });

  it('skips a sent requirement that fails a rule even when the probe offers it too', () => {
    // Polygon USDC is offered live, but the expected network is Base: not a requirement to sign.
    const polygon = accept({ network: POLYGON, asset: POLYGON_USDC });
    const { decision } = bound([accept(), polygon], sent([accept(), polygon], polygon));
    expect(decision.reason).toBe('challenge_mismatch');
    // The caller's own expectation holds the sent requirement too.
    const wallet = bound([accept()], sent([accept()]), request({ payTo: EVIL })).decision;
    expect(wallet.reason).toBe('pay_to_mismatch');
  });

  it('pays another live option the rules allow when the client selected it', () => {
    const dearer = accept({ amount: '20000' });
    const { decision } = bound([accept(), dearer], sent([accept(), dearer], dearer));
    expect(decision.verdict).toBe('pay');
    expect(decision.option).toEqual(dearer);
    // Without a selection, the rules choose from the sent challenge: the cheapest.
    expect(bound([accept(), dearer], sent([dearer, accept()])).decision.option).toEqual(accept());
  });

  it('keeps the live answer when the probe itself is not pay', () => {
    const req = request({ claimedPrice: '0.001' });
    const { decision, requirement } = bound([accept()], sent([accept()]), req);
    expect(decision).toEqual(live([accept()], req));
    expect(decision.reason).toBe('price_mismatch');
    expect(requirement).toEqual(accept());
  });

  it('skips an expired sent requirement when the expiry check is asked', () => {
    const stale = accept({ validBefore: Math.floor(NOW.getTime() / 1000) + 5 });
    const req = request({ checkExpiry: true });
    // The live option states no expiry; the one the client received expires within the skew.
    expect(bound([accept()], sent([stale], stale), req).decision.reason).toBe('challenge_mismatch');
    expect(bound([accept()], sent([stale], stale)).decision.reason).toBe('price_ok');
    // Expiring live as well: the live answer stands.
    expect(bound([stale], sent([stale], stale), req).decision.reason).toBe('challenge_expired');
  });
});

describe('assembleCheck with a sent challenge', () => {
  const altered = accept({ payTo: EVIL });

  it('is byte for byte the plain check without one', () => {
    const plain = assembleCheck(input(outcome([accept()])));
    const withNull = assembleCheck(input(outcome([accept()]), { sent: null }));
    expect(JSON.stringify(withNull)).toBe(JSON.stringify(plain));
  });

  it('describes the sent requirement in payment and terms hash, and says which challenge was judged', () => {
    const selected = accept({ maxTimeoutSeconds: 60 });
    const check = assembleCheck(input(outcome([accept()]), { sent: sent([selected], selected) }));
    const hash = paymentTermsSha256({ network: BASE, asset: BASE_USDC, amountAtomic: '10000', payTo: GOOD });
    expect(check.full).toMatchObject({
      verdict: 'pay',
      payment_terms_sha256: hash,
      // A sent requirement was received about now: its deadline counts from now, not from the probe.
      payment: {
        deadline: new Date(NOW.getTime() + 60_000).toISOString(),
        deadline_source: 'maxTimeoutSeconds',
      },
      sent_challenge: {
        payment_required_sha256: 'a'.repeat(64),
        selected_by: 'caller',
        selected_terms_sha256: hash,
      },
    });
    expect(check.free).toMatchObject({
      payment_terms_sha256: hash,
      sent_challenge: { selected_by: 'caller' },
    });
    expect(check.unsigned.sent_challenge).toEqual(check.full.sent_challenge);
    expect(check.freeUnsigned.sent_challenge).toEqual(check.full.sent_challenge);
  });

  it('never approves, records or publishes terms the caller sent', () => {
    const check = assembleCheck(input(outcome([accept()]), { sent: sent([altered]) }));
    expect(check.full).toMatchObject({
      verdict: 'skip',
      reason: 'challenge_mismatch',
      payment: null,
      payment_terms_sha256: null,
      pay_to: EVIL,
      sent_challenge: { selected_by: 'spotcheck' },
    });
    expect(check.free.payment_terms_sha256).toBeNull();
    // The history holds what the probe saw.
    expect(check.observation?.pay_to).toBe(GOOD);
    expect(isPublicState({ ...check.unsigned })).toBe(false);
    expect(isPublicState({ ...check.freeUnsigned })).toBe(false);
    const plain = assembleCheck(input(outcome([accept()])));
    expect(isPublicState({ ...plain.unsigned })).toBe(true);
  });

  it('never carries terms in a dry run', () => {
    const check = assembleCheck(input(outcome([accept()]), { mode: 'dry-run', sent: sent([accept()]) }));
    expect(check.free).toMatchObject({ verdict: 'pay', payment_terms_sha256: null });
    expect(check.full.payment).toBeNull();
  });
});
