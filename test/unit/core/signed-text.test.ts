/**
 * Signed text is plain text. One label rule for `client` and `ref` on every route (check, payment
 * status, lookup), and payment-status `terms` validated as an address, a CAIP-2 network and an atomic amount.
 */
import { describe, expect, it } from 'vitest';
import { parseCheckParams } from '../../../api/params.ts';
import { decodeChallenge } from '../../../core/challenge.ts';
import { parseListings } from '../../../core/listings.ts';
import { parseLookupParams } from '../../../core/lookup-params.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { parsePaymentStatusInput } from '../../../core/payment-input.ts';
import { expectedTermsFromChallenge } from '../../../core/payment-status.ts';
import { hasHiddenCharacters, isPlainIdentifier } from '../../../core/text.ts';
import { buildPaymentRequired, buildV2Header } from '../../fixtures/challenge.ts';

const TX = `0x${'ab'.repeat(32)}`;
const PAY_TO = '0x52908400098527886E0F7030069857D2E4169EE7';

const LABELS: Array<[string, string, boolean]> = [
  ['a plain tag', 'agent-7', true],
  ['the widest allowed tag', 'a.b_c:d@e/f+g-h', true],
  ['64 characters', 'x'.repeat(64), true],
  ['65 characters', 'x'.repeat(65), false],
  ['a space', 'has space', false],
  ['a newline', 'line\nbreak', false],
  ['an ANSI escape sequence', '\u001b[31mred', false],
  ['a right-to-left override', 'abc\u202edef', false],
  ['a zero-width space', 'agent\u200b7', false],
  ['non-ASCII letters', 'agént', false],
  ['an emoji', 'agent🙂', false],
];

/** Which of the three routes accept `label` as `member`. */
function accepted(member: 'client' | 'ref', label: string): boolean[] {
  const check = parseCheckParams({ url: 'https://seller.example/x', [member]: label });
  const status = parsePaymentStatusInput({ tx_hash: TX, [member]: label });
  const lookup = parseLookupParams(
    { task: 'fx-rate', [member]: label },
    { tasks: ['fx-rate'], requireReference: false },
  );
  return [check.ok, status.ok, lookup.ok];
}

describe('one label rule on every route', () => {
  it.each(LABELS)('client as %s: the same answer everywhere', (_name, label, valid) => {
    expect(accepted('client', label)).toEqual([valid, valid, valid]);
  });

  it.each(LABELS)('ref as %s: the same answer everywhere', (_name, label, valid) => {
    expect(accepted('ref', label)).toEqual([valid, valid, valid]);
  });

  it('payment status answers the same stable codes as the check', () => {
    expect(parsePaymentStatusInput({ tx_hash: TX, client: 'a\nb' })).toMatchObject({
      ok: false,
      code: 'bad_client',
    });
    expect(parsePaymentStatusInput({ tx_hash: TX, ref: '\u202eabc' })).toMatchObject({
      ok: false,
      code: 'bad_ref',
    });
  });
});

describe('payment-status terms', () => {
  const good = { amount: '10000', payTo: PAY_TO, asset: BASE_USDC, network: BASE };
  it.each([
    ['all four members', good],
    ['a numeric amount', { ...good, amount: 10000 }],
    ['a lower-case payee', { ...good, payTo: PAY_TO.toLowerCase() }],
    ['the v1 network name', { ...good, network: 'base' }],
    ['only an amount', { amount: '1' }],
  ])('accepts %s', (_name, terms) => {
    expect(parsePaymentStatusInput({ tx_hash: TX, terms }).ok).toBe(true);
  });

  it.each([
    ['a payee in plain text', { ...good, payTo: 'the seller' }],
    ['a payee with a zero-width space', { ...good, payTo: `${PAY_TO}\u200b` }],
    ['a payee behind a right-to-left override', { ...good, payTo: `\u202e${PAY_TO}` }],
    ['a payee with a bad checksum', { ...good, payTo: '0x52908400098527886E0F7030069857D2E4169Ee7' }],
    ['an asset in plain text', { ...good, asset: 'USDC' }],
    ['a network that is not CAIP-2', { ...good, network: 'Base mainnet' }],
    ['a network with a newline', { ...good, network: 'eip155:8453\n' }],
    ['an amount with a leading zero', { ...good, amount: '010000' }],
    ['a decimal amount', { ...good, amount: '0.01' }],
    ['a negative amount', { ...good, amount: -1 }],
    ['an amount above uint256', { ...good, amount: `1${'0'.repeat(78)}` }],
  ])('refuses %s with bad_terms', (_name, terms) => {
    expect(parsePaymentStatusInput({ tx_hash: TX, terms })).toMatchObject({ ok: false, code: 'bad_terms' });
  });
});

describe("a seller's resource URL", () => {
  it('is dropped from claim.contact when it hides or reorders characters', () => {
    const contactOf = (url: string) => {
      const header = buildV2Header({ resource: { ...(buildPaymentRequired().resource as object), url } });
      const challenge = decodeChallenge({ status: 402, headers: { 'payment-required': header }, body: null });
      if (!challenge.ok) throw new Error('the challenge should decode');
      return expectedTermsFromChallenge(challenge.value)?.contact;
    };
    expect(contactOf('https://seller.example/help')).toBe('https://seller.example/help');
    expect(contactOf('https://seller.example/\u202elpleh')).toBe(null);
    expect(contactOf('https://seller.example/\u001b[2J')).toBe(null);
  });
});

describe('listing records', () => {
  const record = {
    url: 'https://seller.example/x',
    pay_to: PAY_TO,
    network: BASE,
    asset: BASE_USDC,
    source: 'list-a',
  };
  it.each([
    ['pay_to', `\u202e${PAY_TO}`],
    ['network', 'eip155:8453\u200b'],
    ['asset', `${BASE_USDC}\n`],
  ])('with hidden characters in %s are refused: they would be signed as expected_*', (member, value) => {
    expect(parseListings([record]).ok).toBe(true);
    expect(parseListings([{ ...record, [member]: value }]).ok).toBe(false);
  });
});

describe('hidden characters', () => {
  it.each([
    ['\u200b'],
    ['\u200c'],
    ['\u200d'],
    ['\u200e'],
    ['\u200f'],
    ['\u202a'],
    ['\u202e'],
    ['\u2066'],
    ['\u2069'],
    ['\ufeff'],
    ['\u00ad'],
    ['\u2028'],
    ['\u2029'],
    ['\u0000'],
    ['\u001b'],
    ['\u007f'],
    ['\u0085'],
    ['\u3164'],
  ])('%j is hidden', (char) => {
    expect(hasHiddenCharacters(`a${char}b`)).toBe(true);
    expect(isPlainIdentifier(`a${char}b`)).toBe(false);
  });

  it('visible text passes, and identifiers also refuse whitespace', () => {
    expect(hasHiddenCharacters('Zahlung für 🙂 ok')).toBe(false);
    expect(isPlainIdentifier('eip155:8453')).toBe(true);
    expect(isPlainIdentifier('eip155: 8453')).toBe(false);
  });
});
