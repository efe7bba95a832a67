/**
 * `pay` only for a payee and asset that can be signed. With no expected wallet, a 402 whose
 * `payTo` or `asset` is not a valid address of its network (or hides invisible or bidirectional-control characters)
 * is `bad_challenge`, through the real decoder and the verdict rules.
 */
import { describe, expect, it } from 'vitest';
import { isAddressOn, isEvmAddress } from '../../../core/address.ts';
import { decodeChallenge } from '../../../core/challenge.ts';
import type { CheckRequest, ProbeOutcome } from '../../../core/model.ts';
import { BASE_USDC, SOLANA } from '../../../core/networks.ts';
import { decide } from '../../../core/verdict.ts';
import { buildAccept, buildV2Header } from '../../fixtures/challenge.ts';

const GOOD = '0x1111111111111111111111111111111111111111';
const CHECKSUMMED = '0x52908400098527886E0F7030069857D2E4169EE7';
const PROBED_AT = '2026-03-01T12:00:00.000Z';

/** The verdict over a 402 whose options are `accepts`, with no expected wallet (the caller gave none). */
function verdictOf(accepts: unknown[]): { verdict: string; reason: string; payTo: string | null } {
  const headers = { 'payment-required': buildV2Header({ accepts } as never) };
  const outcome: ProbeOutcome = {
    kind: 'response',
    response: {
      status: 402,
      headers,
      body: null,
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: 'x',
      redirects: 0,
    },
    probedAt: PROBED_AT,
    elapsedMs: 1,
  };
  const challenge = decodeChallenge({ status: 402, headers, body: null });
  const request: CheckRequest = {
    url: 'https://seller.example/x',
    method: 'GET',
    claimedPrice: null,
    payTo: null,
    network: null,
    checkExpiry: false,
    skewS: 30,
  };
  const decision = decide({ outcome, challenge, request, listing: null, now: new Date(PROBED_AT) });
  return { verdict: decision.verdict, reason: decision.reason, payTo: decision.option?.payTo ?? null };
}

const HOSTILE_PAYEES: Array<[string, string]> = [
  ['plain text', 'the seller'],
  ['an address with a zero-width space appended', `${GOOD}\u200b`],
  ['an address behind a right-to-left override', `\u202e${GOOD}`],
  ['an address with a left-to-right mark inside', `0x1111\u200e111111111111111111111111111111111111`],
  ['an address with a BOM', `\ufeff${GOOD}`],
  ['an address with a trailing space', `${GOOD} `],
  ['an address with a newline', `${GOOD}\n`],
  ['a mixed-case address with a bad EIP-55 checksum', '0x52908400098527886E0F7030069857D2E4169Ee7'],
  ['39 hex digits', GOOD.slice(0, -1)],
  ['41 hex digits', `${GOOD}1`],
  ['an upper-case 0X prefix', `0X${GOOD.slice(2)}`],
  ['fullwidth digits', `0x${'１'.repeat(40)}`],
  ['a Solana-looking address on Base', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'],
];

describe('a payee that cannot be signed is never approved', () => {
  it.each(HOSTILE_PAYEES)('payTo as %s → bad_challenge', (_name, payTo) => {
    expect(verdictOf([buildAccept({ payTo })])).toMatchObject({ verdict: 'skip', reason: 'bad_challenge' });
  });

  it.each([
    ['an asset with a zero-width space', `${BASE_USDC}\u200b`],
    ['an asset behind a right-to-left isolate', `\u2067${BASE_USDC}`],
    ['an asset with a bad EIP-55 checksum', BASE_USDC.replace('fCD', 'FCD')],
  ])('%s → bad_challenge', (_name, asset) => {
    expect(verdictOf([buildAccept({ asset })])).toMatchObject({ verdict: 'skip', reason: 'bad_challenge' });
  });

  it('a hostile first option spoils the challenge: it is never approved, nor hidden behind a valid one', () => {
    const hostile = buildAccept({ payTo: `\u202e${GOOD}`, amount: '1' });
    expect(verdictOf([hostile, buildAccept()])).toMatchObject({ verdict: 'skip', reason: 'bad_challenge' });
    expect(verdictOf([buildAccept(), hostile])).toMatchObject({ verdict: 'skip', reason: 'bad_challenge' });
  });

  it.each([
    ['lower case', GOOD],
    ['EIP-55 checksummed', CHECKSUMMED],
    ['all upper-case hex', `0x${CHECKSUMMED.slice(2).toUpperCase()}`],
  ])('a valid payee (%s) is approved', (_name, payTo) => {
    expect(verdictOf([buildAccept({ payTo })])).toEqual({ verdict: 'pay', reason: 'price_ok', payTo });
  });
});

describe('addresses', () => {
  it.each([
    [GOOD, true],
    [CHECKSUMMED, true],
    [CHECKSUMMED.toLowerCase(), true],
    ['0x52908400098527886E0F7030069857D2E4169Ee7', false],
    [`${GOOD}\u200b`, false],
    ['0x', false],
  ])('isEvmAddress(%j) is %s', (text, valid) => {
    expect(isEvmAddress(text)).toBe(valid);
  });

  it('knows the address form of EVM and Solana networks only', () => {
    expect(isAddressOn('eip155:8453', GOOD)).toBe(true);
    expect(isAddressOn('eip155:1', 'hello')).toBe(false);
    expect(isAddressOn(SOLANA, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')).toBe(true);
    expect(isAddressOn(SOLANA, `EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v\u200b`)).toBe(false);
    expect(isAddressOn(SOLANA, GOOD)).toBe(false);
    expect(isAddressOn('cosmos:cosmoshub-4', 'cosmos1abc')).toBe(null);
  });
});
