/**
 * Hosted mode's published numbers and the band rule (docs/api.md §2.5, §8; docs/api.md §5.4): per integrator and
 * calendar month (UTC), checks 1 to 1,000 are `free_allowance` (0), 1,001 to 2,000 `standard` (20000 atomic USDC
 * each), from 2,001 `volume` (10000 each). Amounts are atomic USDC as bigint, never floats.
 */

export const HOSTED = {
  /** Checks per minute per key (docs/api.md §8). */
  ratePerMinute: 120,
  freeAllowance: 1000,
  standardUpTo: 2000,
  standardPriceAtomic: 20000n,
  volumePriceAtomic: 10000n,
} as const;

export const BANDS = ['free_allowance', 'standard', 'volume'] as const;
export type Band = (typeof BANDS)[number];

/** Calls of one integrator in one month, by band. */
export type BandCounts = Record<Band, number>;

/**
 * The band and price of the `n`th hosted check (1-based) of an integrator's month.
 * @example bandOf(1001) // { band: 'standard', priceAtomic: 20000n }
 */
export function bandOf(n: number): { band: Band; priceAtomic: bigint } {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`bandOf: ${n} is not a call number`);
  if (n <= HOSTED.freeAllowance) return { band: 'free_allowance', priceAtomic: 0n };
  if (n <= HOSTED.standardUpTo) return { band: 'standard', priceAtomic: HOSTED.standardPriceAtomic };
  return { band: 'volume', priceAtomic: HOSTED.volumePriceAtomic };
}

/** The unit price of a band, atomic USDC. */
export function bandPrice(band: Band): bigint {
  if (band === 'standard') return HOSTED.standardPriceAtomic;
  if (band === 'volume') return HOSTED.volumePriceAtomic;
  return 0n;
}

/**
 * How `calls` checks of a month split into bands.
 * @example bandCounts(2500) // { free_allowance: 1000, standard: 1000, volume: 500 }
 */
export function bandCounts(calls: number): BandCounts {
  const free = Math.min(calls, HOSTED.freeAllowance);
  const standard = Math.min(
    Math.max(calls - HOSTED.freeAllowance, 0),
    HOSTED.standardUpTo - HOSTED.freeAllowance,
  );
  return { free_allowance: free, standard, volume: Math.max(calls - HOSTED.standardUpTo, 0) };
}

/**
 * What the first `calls` checks of a month cost, atomic USDC.
 * @example amountDue(2001) // 20010000n (1,000 × 20000 + 1 × 10000)
 */
export function amountDue(calls: number): bigint {
  const counts = bandCounts(calls);
  return BANDS.reduce((sum, band) => sum + bandPrice(band) * BigInt(counts[band]), 0n);
}

/** The UTC calendar month of an instant, `YYYY-MM`. */
export function utcMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** True for a `YYYY-MM` month. */
export function isMonth(value: unknown): value is string {
  return typeof value === 'string' && MONTH.test(value);
}

/** The first instant of a month and of the month after it (UTC). */
export function monthBounds(month: string): { start: Date; end: Date } {
  const match = MONTH.exec(month);
  if (!match) throw new RangeError(`monthBounds: ${month} is not YYYY-MM`);
  const year = Number(match[1]);
  const index = Number(match[2]) - 1;
  return { start: new Date(Date.UTC(year, index, 1)), end: new Date(Date.UTC(year, index + 1, 1)) };
}
