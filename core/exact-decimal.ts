/**
 * Exact decimal arithmetic for the values answer checks compute (a conversion at a rate, a sum): operands are the
 * decimals numbers print as, so 0.1 + 0.2 is 0.3 and 1234.56 × 1.0956 has every digit.
 */

/** An exact decimal, `units × 10^-scale`. */
export type Decimal = { units: bigint; scale: number };

/**
 * The exact decimal a JavaScript number prints as (its shortest round-trip spelling, exponents included).
 * @example decimal(1.0956) // { units: 10956n, scale: 4 }
 */
export function decimal(x: number): Decimal {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (m === null) throw new RangeError(`not a finite number: ${x}`);
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = m;
  let units = BigInt(`${sign}${whole}${fraction}`);
  let scale = fraction.length - Number(exponent);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units, scale };
}

/** a + b, exactly. */
export function addDecimals(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  const up = (d: Decimal) => d.units * 10n ** BigInt(scale - d.scale);
  return { units: up(a) + up(b), scale };
}

/** a × b, exactly. */
export function multiplyDecimals(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** Plain decimal text (no exponent), which `Number` reads as the nearest double. */
export function decimalText({ units, scale }: Decimal): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}
