/**
 * Text that RFC 8785 cannot carry (a lone UTF-16 surrogate) must be refused where it enters, as a verdict or a
 * 400, never reach the receipt signer and turn into a 500.
 */
import { describe, expect, it } from 'vitest';
import { decodeChallenge } from '../../../core/challenge.ts';
import { canonicalJson } from '../../../core/jcs.ts';
import { parsePaymentStatusInput } from '../../../core/payment-input.ts';
import { buildAccept, buildV2Header } from '../../fixtures/challenge.ts';

const LONE = '\ud800';

describe('lone surrogates', () => {
  it('cannot be signed: canonicalJson refuses them', () => {
    expect(() => canonicalJson({ pay_to: `0x${LONE}` })).toThrow(TypeError);
  });

  it.each([['payTo'], ['asset'], ['network'], ['scheme']])(
    'in an option %s make the challenge invalid',
    (field) => {
      const header = buildV2Header({ accepts: [buildAccept({ [field]: `x${LONE}y` })] } as never);
      expect(
        decodeChallenge({ status: 402, headers: { 'payment-required': header }, body: null }),
      ).toMatchObject({
        ok: false,
        kind: 'invalid',
      });
    },
  );

  it('a well-formed surrogate pair (an emoji) is still text', () => {
    const header = buildV2Header({ accepts: [buildAccept({ scheme: 'exact🙂' })] } as never);
    expect(decodeChallenge({ status: 402, headers: { 'payment-required': header }, body: null }).ok).toBe(
      true,
    );
  });

  it.each([['client'], ['ref']])('in payment-status %s are a 400 code, not a receipt', (member) => {
    const result = parsePaymentStatusInput({ tx_hash: `0x${'ab'.repeat(32)}`, [member]: `x${LONE}` });
    expect(result.ok).toBe(false);
  });
});
