import { describe, expect, it } from 'vitest';
import { atomicToUsd, compareAtomicToUsd, isAtomic, parseUsd } from '../../../core/amount.ts';

describe('isAtomic', () => {
  it.each(['0', '1', '10000', '9'.repeat(77), (2n ** 256n - 1n).toString()])('accepts %s', (s) => {
    expect(isAtomic(s)).toBe(true);
  });

  it.each(['', '-1', '+1', '0.01', '1e6', '010', '00', ' 1', '1 ', '0x10', '１', (2n ** 256n).toString()])(
    'refuses %j',
    (s) => {
      expect(isAtomic(s)).toBe(false);
    },
  );
});

describe('atomicToUsd', () => {
  it.each([
    ['10000', 6, 0.01],
    ['1', 6, 0.000001],
    ['0', 6, 0],
    ['1234567', 6, 1.234567],
    ['20000', 6, 0.02],
    ['9000000', 6, 9],
    ['5', 0, 5],
    ['1000000000000000000', 18, 1],
  ] as const)('%s at %i decimals is %d', (atomic, decimals, usd) => {
    expect(atomicToUsd(atomic, decimals)).toBe(usd);
  });

  it('throws on a non-atomic amount or bad decimals', () => {
    expect(() => atomicToUsd('0.01', 6)).toThrow(RangeError);
    expect(() => atomicToUsd('1', -1)).toThrow(RangeError);
    expect(() => atomicToUsd('1', 1.5)).toThrow(RangeError);
  });
});

describe('compareAtomicToUsd', () => {
  it.each([
    ['10000', '0.01', 0],
    ['10001', '0.01', 1],
    ['9999', '0.01', -1],
    ['10000', '0.010000', 0],
    ['1000000', '1', 0],
    ['1000001', '1', 1],
    ['0', '0', 0],
    ['1', '0', 1],
    ['0', '0.000001', -1],
    // More decimals than USDC has: the claim sits between two atomic units.
    ['1', '0.0000015', -1],
    ['2', '0.0000015', 1],
    ['10000', '0.010000000000000001', -1],
    // JavaScript number text with an exponent is expanded exactly.
    ['0', '1e-7', -1],
    ['1', '1e-7', 1],
    ['100', '1e-4', 0],
    ['1000000000000000000000000000', '1e21', 0],
    ['10000', '.01', 0],
  ] as const)('%s vs $%s → %i', (atomic, usd, expected) => {
    expect(compareAtomicToUsd(atomic, 6, usd)).toBe(expected);
  });

  it('does not suffer float rounding', () => {
    // 0.1 + 0.2 style: 300000 atomic is exactly 0.3, even though 0.1 + 0.2 !== 0.3 in floats.
    expect(compareAtomicToUsd('300000', 6, '0.3')).toBe(0);
    expect(compareAtomicToUsd('300000', 6, String(0.1 + 0.2))).toBe(-1);
  });

  it('throws on a bad USD string', () => {
    expect(() => compareAtomicToUsd('1', 6, 'abc')).toThrow(RangeError);
    expect(() => compareAtomicToUsd('1', 6, '-1')).toThrow(RangeError);
    expect(() => compareAtomicToUsd('x', 6, '1')).toThrow(RangeError);
  });
});

describe('parseUsd', () => {
  it.each([
    ['0.01', '0.01'],
    ['1', '1'],
    ['1.50', '1.5'],
    ['001.0', '1'],
    ['0', '0'],
    ['0.000', '0'],
    ['.5', '0.5'],
    ['5.', '5'],
    ['0.0000015', '0.0000015'],
    ['1e-7', '0.0000001'],
    [String(1e-7), '0.0000001'],
    ['1.5E+2', '150'],
    ['2.5e-3', '0.0025'],
    ['1e21', '1000000000000000000000'],
    ['0.000000000000000001', '0.000000000000000001'],
    ['0.1000000000000000000000', '0.1'],
  ])('%j → %j', (input, canonical) => {
    expect(parseUsd(input)).toBe(canonical);
  });

  it.each([
    '',
    '.',
    'e5',
    '-1',
    '+1',
    ' 1',
    '1 ',
    '1,5',
    'NaN',
    'Infinity',
    '0x10',
    '1e',
    '1e1000',
    '0.0000000000000000001',
    '1e-19',
    '1'.repeat(65),
    '1e31',
    '1.2.3',
  ])('refuses %j', (input) => {
    expect(parseUsd(input)).toBeNull();
  });
});
