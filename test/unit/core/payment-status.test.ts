import { describe, expect, it } from 'vitest';
import type { Challenge } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import type { Hex, PaymentStatusQuery } from '../../../core/payment-input.ts';
import {
  type ChainEvidence,
  decidePaymentStatus,
  type ExpectedTerms,
  expectedTermsFromChallenge,
  isoSeconds,
  noSourceAnswered,
  type SourceEvidence,
} from '../../../core/payment-status.ts';
import { FROM, NONCE, sourceEvidence, TO, TX, unreachableSource } from '../../fixtures/payment.ts';

const OTHER_TX: Hex = `0x${'cd'.repeat(32)}`;
const VB = 1_800_000_000;
const SECOND = BigInt(VB);

function query(overrides: Partial<PaymentStatusQuery> = {}): PaymentStatusQuery {
  return {
    from: FROM,
    nonce: NONCE,
    validAfter: 0n,
    validBefore: SECOND,
    value: 10000n,
    to: TO,
    txHash: null,
    sellerUrl: null,
    terms: null,
    accepted: { amount: '10000', payTo: TO, asset: BASE_USDC, network: BASE },
    source: 'payment_payload',
    payloadVersion: 2,
    client: null,
    ref: null,
    ...overrides,
  };
}

/** A query by `tx_hash` alone: the authorization is unknown until a source recovers it. */
const txHashQuery = () =>
  query({ from: null, nonce: null, validBefore: null, txHash: TX, source: 'tx_hash', value: null, to: null });

const source = (name: string, overrides: Partial<SourceEvidence> = {}): SourceEvidence =>
  sourceEvidence({ name, head: 1000, headTime: VB - 100, ...overrides });

const down = (name: string): SourceEvidence => unreachableSource(name, 'connection refused');

function landedSource(name: string, head = 1000, txHash = TX): SourceEvidence {
  return source(name, {
    head,
    nonceUsed: true,
    usedLog: { txHash, blockNumber: 995 },
    receipt: { txHash, status: 'success', blockNumber: 995, transfer: { from: FROM, to: TO, value: 10000n } },
  });
}

const decide = (sources: SourceEvidence[], q = query(), termsExpected: ExpectedTerms | null = null) =>
  decidePaymentStatus({ query: q, evidence: { sources }, termsExpected });

describe('decidePaymentStatus: landed', () => {
  it('is landed when two sources find AuthorizationUsed in a successful transaction', () => {
    const result = decide([landedSource('a'), landedSource('b')]);
    expect(result).toMatchObject({
      status: 'landed',
      reason: 'settled_onchain',
      safe_to_resign: false,
      safe_to_retry_same_payload: true,
      wait_until: null,
      authorization: {
        from: FROM,
        nonce: NONCE,
        used_onchain: true,
        event: 'AuthorizationUsed',
        expired: false,
      },
      tx: { hash: TX, block: 995, status: 'success', transfer: { from: FROM, to: TO, value: '10000' } },
      finality: { confirmations: 6, min_confirmations: 10, reorg_safe: false },
      rpc: { sources_agreed: 2 },
    });
    expect(result.why).toContain(TX);
  });

  it.each([
    [1003, 9, false],
    [1004, 10, true],
    [1200, 206, true],
  ])('head %i gives %i confirmations, reorg_safe %s', (head, confirmations, reorgSafe) => {
    const result = decide([landedSource('a', head), landedSource('b', head)]);
    expect(result.finality).toEqual({ confirmations, min_confirmations: 10, reorg_safe: reorgSafe });
  });

  it('counts confirmations from the lowest agreeing head', () => {
    expect(decide([landedSource('a', 1010), landedSource('b', 1003)]).finality.confirmations).toBe(9);
  });

  it('stays landed when the other source has not reached the block yet', () => {
    const result = decide([landedSource('a'), source('b', { head: 990, nonceUsed: false })]);
    expect(result.status).toBe('landed');
    expect(result.rpc.sources_agreed).toBe(1);
  });

  it('is unknown when a source that has seen the block reports the nonce unused', () => {
    const result = decide([landedSource('a'), source('b', { head: 995, nonceUsed: false })]);
    expect(result).toMatchObject({ status: 'unknown', reason: 'sources_disagree', safe_to_resign: false });
  });

  it('is unknown when sources name different transactions', () => {
    expect(decide([landedSource('a'), landedSource('b', 1000, OTHER_TX)]).reason).toBe('sources_disagree');
  });

  it('is unknown when the receipt is missing or reverted', () => {
    const noReceipt = { ...landedSource('a'), receipt: null };
    expect(decide([noReceipt]).reason).toBe('event_not_found');
    const reverted = landedSource('a');
    reverted.receipt = { txHash: TX, status: 'reverted', blockNumber: 995, transfer: null };
    expect(decide([reverted]).status).toBe('unknown');
  });
});

describe('decidePaymentStatus: canceled', () => {
  const canceled = (name: string) =>
    source(name, { nonceUsed: true, canceledLog: { txHash: OTHER_TX, blockNumber: 990 } });

  it('is canceled when AuthorizationCanceled is found', () => {
    expect(decide([canceled('a'), canceled('b')])).toMatchObject({
      status: 'canceled',
      reason: 'canceled_onchain',
      safe_to_resign: false,
      authorization: { used_onchain: true, event: 'AuthorizationCanceled' },
    });
  });

  it('is unknown when one source saw a use and another a cancel', () => {
    expect(decide([landedSource('a'), canceled('b')]).reason).toBe('sources_disagree');
  });
});

describe('decidePaymentStatus: pending and not_landed', () => {
  const at = (name: string, headTime: number) => source(name, { headTime });

  it('is pending before validBefore, with wait_until = validBefore + 120 s', () => {
    const result = decide([at('a', VB - 100), at('b', VB - 100)]);
    expect(result).toMatchObject({
      status: 'pending',
      reason: 'unused_not_expired',
      safe_to_resign: false,
      wait_until: isoSeconds(SECOND + 120n),
      authorization: { used_onchain: false, event: null, expired: false, valid_before: isoSeconds(SECOND) },
      tx: null,
      finality: { confirmations: null, reorg_safe: false },
    });
  });

  it('is still pending between validBefore and validBefore + 120 s, marked expired', () => {
    const result = decide([at('a', VB + 60), at('b', VB + 60)]);
    expect(result.status).toBe('pending');
    expect(result.authorization.expired).toBe(true);
  });

  it('is pending with a single source while unexpired', () => {
    expect(decide([at('a', VB - 10), down('b')]).status).toBe('pending');
  });

  describe('safe_to_resign edges', () => {
    it.each<[string, SourceEvidence[], PaymentStatusQuery, string, boolean]>([
      [
        'two agree at exactly validBefore + 120',
        [at('a', VB + 120), at('b', VB + 120)],
        query(),
        'pending',
        false,
      ],
      ['two agree at validBefore + 121', [at('a', VB + 121), at('b', VB + 121)], query(), 'not_landed', true],
      ['one source only (other down)', [at('a', VB + 500), down('b')], query(), 'unknown', false],
      ['one source configured', [at('a', VB + 500)], query(), 'unknown', false],
      ['two answers under one name', [at('a', VB + 500), at('a', VB + 500)], query(), 'unknown', false],
      ['the lower head time decides', [at('a', VB + 500), at('b', VB + 100)], query(), 'pending', false],
      [
        'sources disagree',
        [at('a', VB + 500), source('b', { headTime: VB + 500, nonceUsed: true })],
        query(),
        'unknown',
        false,
      ],
      [
        'validBefore unknown',
        [at('a', VB + 500), at('b', VB + 500)],
        query({ validBefore: null, source: 'from_nonce' }),
        'unknown',
        false,
      ],
      ['no source answered', [down('a'), down('b')], query(), 'unknown', false],
    ])('%s', (_name, sources, q, status, safe) => {
      const result = decide(sources, q);
      expect(result.status).toBe(status);
      expect(result.safe_to_resign).toBe(safe);
      expect(result.safe_to_retry_same_payload).toBe(true);
    });
  });

  it('not_landed reports expired_unused and both sources', () => {
    const result = decide([at('a', VB + 200), at('b', VB + 121)]);
    expect(result).toMatchObject({
      reason: 'expired_unused',
      wait_until: null,
      authorization: { expired: true, used_onchain: false },
      rpc: {
        sources: [
          { name: 'a', ok: true, head: 1000 },
          { name: 'b', ok: true, head: 1000 },
        ],
        sources_agreed: 2,
      },
    });
  });
});

describe('decidePaymentStatus: incomplete evidence', () => {
  it('is unknown when the nonce is used but no event was found', () => {
    const used = (name: string) => source(name, { nonceUsed: true });
    expect(decide([used('a'), used('b')])).toMatchObject({
      reason: 'event_not_found',
      authorization: { used_onchain: true },
      safe_to_resign: false,
    });
  });

  it('is tx_not_found for a tx_hash that no source knows', () => {
    const q = txHashQuery();
    const result = decide([source('a', { nonceUsed: null }), source('b', { nonceUsed: null })], q);
    expect(result).toMatchObject({ status: 'unknown', reason: 'tx_not_found', tx: null });
    expect(result.terms_match).toMatchObject({ asset: 'unknown', network: 'unknown', compared: null });
  });

  it('uses an authorization recovered from a reverted transaction', () => {
    const recovered = {
      from: FROM,
      nonce: NONCE,
      to: TO,
      value: 10000n,
      validAfter: 0n,
      validBefore: SECOND,
    };
    const receipt = { txHash: TX, status: 'reverted' as const, blockNumber: 900, transfer: null };
    const q = txHashQuery();
    const seen = (name: string) => source(name, { headTime: VB + 300, recovered, receipt });
    const result = decide([seen('a'), seen('b')], q);
    expect(result).toMatchObject({
      status: 'not_landed',
      safe_to_resign: true,
      authorization: { from: FROM, nonce: NONCE },
      tx: { hash: TX, status: 'reverted', block: 900 },
      terms_match: { compared: 'authorization' },
    });
  });
});

describe('noSourceAnswered', () => {
  it('is true only when every source failed', () => {
    const evidence = (sources: SourceEvidence[]): ChainEvidence => ({ sources });
    expect(noSourceAnswered(evidence([down('a'), down('b')]))).toBe(true);
    expect(noSourceAnswered(evidence([]))).toBe(true);
    expect(noSourceAnswered(evidence([down('a'), source('b')]))).toBe(false);
  });

  it('shows failed sources with ok false and no head', () => {
    const result = decide([down('a'), down('b')]);
    expect(result.reason).toBe('chain_unavailable');
    expect(result.rpc.sources).toEqual([
      { name: 'a', ok: false, head: null },
      { name: 'b', ok: false, head: null },
    ]);
  });
});

describe('decidePaymentStatus: terms_match and claim', () => {
  const expectation = (overrides: Partial<ExpectedTerms>): ExpectedTerms => ({
    amount: '10000',
    payTo: TO,
    asset: BASE_USDC,
    network: BASE,
    source: 'terms',
    contact: null,
    ...overrides,
  });

  it("compares the authorization with the payload's accepted requirements by default", () => {
    expect(decide([landedSource('a')]).terms_match).toEqual({
      amount: 'match',
      pay_to: 'match',
      asset: 'match',
      network: 'match',
      source: 'payment_payload',
      compared: 'authorization',
    });
  });

  it('reports each mismatch against the expected terms', () => {
    const expected = expectation({ amount: '20000', payTo: FROM, asset: TO, network: 'eip155:1' });
    expect(decide([landedSource('a')], query(), expected).terms_match).toEqual({
      amount: 'mismatch',
      pay_to: 'mismatch',
      asset: 'mismatch',
      network: 'mismatch',
      source: 'terms',
      compared: 'authorization',
    });
  });

  it("prefers the caller's terms over the payload and compares case-insensitively", () => {
    const q = query({
      terms: { amount: '10000', payTo: TO.toUpperCase().replace('0X', '0x'), asset: null, network: null },
    });
    expect(decide([landedSource('a')], q).terms_match).toMatchObject({
      pay_to: 'match',
      asset: 'unknown',
      source: 'terms',
    });
  });

  it('compares the on-chain transfer when only from and nonce were sent', () => {
    const q = query({ value: null, to: null, accepted: null, source: 'from_nonce', payloadVersion: null });
    const result = decide([landedSource('a')], q, expectation({ amount: '10000', payTo: TO }));
    expect(result.terms_match).toMatchObject({ amount: 'match', pay_to: 'match', compared: 'transfer' });
  });

  it('is all unknown without an expectation', () => {
    const q = query({ accepted: null, source: 'from_nonce' });
    expect(decide([landedSource('a')], q).terms_match).toMatchObject({
      amount: 'unknown',
      pay_to: 'unknown',
      source: null,
    });
  });

  it('points the claim at the seller and names what cannot be known', () => {
    const q = query({ sellerUrl: 'https://seller.example/x' });
    const result = decide([landedSource('a')], q, expectation({ contact: 'https://seller.example/x' }));
    expect(result.claim).toEqual({
      seller_url: 'https://seller.example/x',
      contact: 'https://seller.example/x',
      evidence: 'receipt',
    });
    expect(result.cannot_know.join(' ')).toContain('delivered');
    expect(decide([source('a')]).cannot_know.join(' ')).toContain('facilitator');
    const bare = query({ source: 'from_nonce', value: null, to: null, accepted: null, payloadVersion: null });
    expect(decide([source('a')], bare).cannot_know.join(' ')).toContain('valid_before you sent');
    expect(decide([source('a')]).cannot_know.join(' ')).not.toContain('valid_before you sent');
  });
});

describe('expectedTermsFromChallenge', () => {
  const accept = (overrides: Partial<Challenge['accepts'][number]>) => ({
    scheme: 'exact',
    network: BASE,
    amount: '10000',
    asset: BASE_USDC,
    payTo: TO,
    maxTimeoutSeconds: 300,
    validBefore: null,
    extra: null,
    ...overrides,
  });
  const challenge = (accepts: Challenge['accepts']): Challenge => ({
    version: 2,
    source: 'header',
    lenient: false,
    accepts,
    resource: { url: 'https://seller.example/x', description: null, mimeType: null },
    notes: [],
  });

  it('picks the Base USDC option even when a hostile option comes first', () => {
    const hostile = accept({ network: 'eip155:1', payTo: FROM, amount: '1' });
    expect(expectedTermsFromChallenge(challenge([hostile, accept({})]))).toEqual({
      amount: '10000',
      payTo: TO,
      asset: BASE_USDC,
      network: BASE,
      source: 'seller_challenge',
      contact: 'https://seller.example/x',
    });
  });

  it('falls back to the first option, and gives null without options', () => {
    expect(expectedTermsFromChallenge(challenge([accept({ network: 'eip155:1' })]))?.network).toBe(
      'eip155:1',
    );
    expect(expectedTermsFromChallenge(challenge([]))).toBeNull();
  });
});

describe('isoSeconds', () => {
  it('formats unix seconds and refuses what a Date cannot hold', () => {
    expect(isoSeconds(SECOND)).toBe('2027-01-15T08:00:00.000Z');
    expect(isoSeconds(2n ** 256n - 1n)).toBeNull();
  });

  it('survives a payload with validBefore = 2^256 - 1', () => {
    const result = decide([source('a'), source('b')], query({ validBefore: 2n ** 256n - 1n }));
    expect(result).toMatchObject({
      status: 'pending',
      wait_until: null,
      authorization: { valid_before: null },
    });
  });
});
