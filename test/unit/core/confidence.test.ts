import { describe, expect, it } from 'vitest';
import { CONFIDENCE_RULES, type ConfidenceInput, confidence } from '../../../core/confidence.ts';

const WALLET = '0x1111111111111111111111111111111111111111';
const clean: ConfidenceInput = {
  fresh: true,
  lenient: false,
  expectedSource: 'request',
  expectedPayTo: WALLET,
};

describe('confidence', () => {
  it.each([
    [clean, 'high'],
    [{ ...clean, expectedSource: 'listing' }, 'medium'],
    [{ ...clean, fresh: false }, 'medium'],
    [{ ...clean, lenient: true }, 'medium'],
    [{ ...clean, expectedSource: 'listing', fresh: false, lenient: true }, 'medium'],
    [{ ...clean, expectedPayTo: null }, 'low'],
    [{ ...clean, expectedPayTo: null, expectedSource: null }, 'low'],
    // No wallet outranks everything else: a fresh clean probe cannot compare the wallet.
    [{ fresh: false, lenient: true, expectedSource: 'listing', expectedPayTo: null }, 'low'],
  ] as const)('%j → %s', (input, expected) => {
    expect(confidence(input)).toBe(expected);
  });

  it('publishes one rule per level, low first', () => {
    expect(CONFIDENCE_RULES.map((r) => r.confidence)).toEqual(['low', 'medium', 'high']);
    for (const r of CONFIDENCE_RULES) expect(r.rule.length).toBeGreaterThan(20);
  });
});
