/**
 * Token amounts: atomic integer strings from challenges and decimal USD strings from callers and listings.
 *
 * Every comparison is exact (BigInt on scaled integers); floats appear only in {@link atomicToUsd}, for
 * display. Design.md "Several options in one challenge": amounts are compared as integers, never as floats.
 */

/** Largest EVM amount (uint256); an atomic string above it cannot be a real transfer value. */
const MAX_UINT256 = (1n << 256n) - 1n;
/** Canonical atomic form: `0` or digits without a leading zero, at most 78 digits (uint256). */
const ATOMIC = /^(?:0|[1-9][0-9]{0,77})$/;
/** Plain decimal (`1`, `0.01`, `.5`, `5.`) with an optional exponent, as `String(n)` writes small numbers. */
const DECIMAL = /^([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,3}))?$/;
/** Bounds that keep a hostile string from expanding into megabytes of zeros. */
const MAX_INPUT_LENGTH = 64;
const MAX_EXPONENT = 100;
const MAX_FRACTION_DIGITS = 18;
const MAX_INTEGER_DIGITS = 30;

/**
 * True for a canonical atomic amount: a non-negative integer in decimal digits, no sign, no leading zero,
 * no fraction, at most uint256. Leading zeros are refused so that equal amounts have one spelling (the
 * terms hash of docs/api.md §2.1 is computed over the string).
 * @example isAtomic('10000') // true; isAtomic('0.01') // false
 */
export function isAtomic(s: string): boolean {
  return ATOMIC.test(s) && BigInt(s) <= MAX_UINT256;
}

/**
 * Atomic units to a USD number, for display fields such as `quoted_price_usd` only. Throws `RangeError` on a
 * non-atomic string or a bad `decimals` (a caller bug: amounts are validated when a challenge is decoded).
 * @example atomicToUsd('10000', 6) // 0.01
 */
export function atomicToUsd(atomic: string, decimals: number): number {
  assertAtomic(atomic);
  assertDecimals(decimals);
  const padded = atomic.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals);
  return Number(decimals === 0 ? whole : `${whole}.${fraction}`);
}

/**
 * Exact comparison of an atomic amount with a USD decimal string: -1 when the atomic amount is below, 0
 * when equal, 1 when above. `usd` is anything {@link parseUsd} accepts (`"0.01"`, `"1"`, `"1e-7"`); throws
 * `RangeError` otherwise, so validate caller input with `parseUsd` first.
 * @example compareAtomicToUsd('10001', 6, '0.01') // 1
 */
export function compareAtomicToUsd(atomic: string, decimals: number, usd: string): -1 | 0 | 1 {
  assertAtomic(atomic);
  assertDecimals(decimals);
  const parsed = parseDecimal(usd);
  if (parsed === null) throw new RangeError(`not a USD decimal: ${JSON.stringify(usd)}`);
  // atomic / 10^decimals  vs  units / 10^scale  ⇔  atomic·10^scale  vs  units·10^decimals
  const left = BigInt(atomic) * 10n ** BigInt(parsed.scale);
  const right = parsed.units * 10n ** BigInt(decimals);
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Validates a non-negative USD decimal as a caller sends it and returns its canonical spelling, or null.
 * Accepts plain decimals and JavaScript number text with an exponent (`String(1e-7)` is `"1e-7"`), expanded
 * exactly; refuses signs, spaces, `NaN`, `Infinity`, hex, more than 18 fraction digits after expansion and
 * inputs over 64 characters. Canonical form: no leading zeros in the integer part, no trailing fraction
 * zeros, no exponent.
 * @example parseUsd('0.010') // '0.01'; parseUsd('1e-7') // '0.0000001'; parseUsd('-1') // null
 */
export function parseUsd(input: string): string | null {
  const parsed = parseDecimal(input);
  if (parsed === null) return null;
  const digits = parsed.units.toString();
  if (parsed.scale === 0) return digits;
  const padded = digits.padStart(parsed.scale + 1, '0');
  return `${padded.slice(0, padded.length - parsed.scale)}.${padded.slice(padded.length - parsed.scale)}`;
}

/** A decimal as an integer number of 10^-scale units, with trailing fraction zeros removed. */
type Scaled = { units: bigint; scale: number };

function parseDecimal(input: string): Scaled | null {
  if (input.length === 0 || input.length > MAX_INPUT_LENGTH) return null;
  const match = DECIMAL.exec(input);
  if (match === null) return null;
  const whole = match[1] ?? '';
  const fraction = match[2] ?? '';
  if (whole.length + fraction.length === 0) return null;
  const exponent = match[3] === undefined ? 0 : Number(match[3]);
  if (Math.abs(exponent) > MAX_EXPONENT) return null;

  // Shift the decimal point by the exponent on the digit string itself: no float ever sees the value.
  let digits = (whole + fraction).replace(/^0+(?=[0-9])/, '');
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  while (scale > 0 && digits.endsWith('0') && digits.length > 1) {
    digits = digits.slice(0, -1);
    scale -= 1;
  }
  if (/^0+$/.test(digits)) return { units: 0n, scale: 0 };
  if (scale > MAX_FRACTION_DIGITS) return null;
  if (digits.length - scale > MAX_INTEGER_DIGITS) return null;
  return { units: BigInt(digits), scale };
}

function assertAtomic(atomic: string): void {
  if (!isAtomic(atomic)) throw new RangeError(`not an atomic amount: ${JSON.stringify(atomic)}`);
}

function assertDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36) {
    throw new RangeError(`bad token decimals: ${decimals}`);
  }
}

/**
 * Decimal USD text of an atomic USDC amount (6 decimals), without float arithmetic.
 * @example atomicToUsdText('20000') // '0.02'
 */
export function atomicToUsdText(atomic: string): string {
  assertAtomic(atomic);
  const padded = atomic.padStart(7, '0');
  const whole = padded.slice(0, -6);
  const fraction = padded.slice(-6).replace(/0+$/, '');
  return fraction.length === 0 ? whole : `${whole}.${fraction}`;
}

/**
 * A USD decimal as atomic USDC (6 decimals); null when it is not a decimal {@link parseUsd} accepts or has a
 * fraction finer than one atomic unit.
 * @example usdToAtomic('12.5') // '12500000'; usdToAtomic('0.0000001') // null
 */
export function usdToAtomic(usd: string): string | null {
  const parsed = parseDecimal(usd);
  if (parsed === null || parsed.scale > 6) return null;
  return (parsed.units * 10n ** BigInt(6 - parsed.scale)).toString();
}
