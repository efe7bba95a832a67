/**
 * Latency statistics for the benchmarks: nearest-rank percentiles over the raw samples (no histogram buckets, so
 * a p99 is a latency that was actually observed).
 */

/** Summary of a set of latency samples, in milliseconds. */
export type Summary = { n: number; p50: number; p90: number; p99: number; max: number; mean: number };

/** The nearest-rank percentile `p` (0..100) of `sorted` (ascending); NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

/** Summarizes latency samples (ms). */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((acc, x) => acc + x, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

/** Milliseconds with a precision that suits the figure: 0.123, 1.23, 12.3, 123. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  return abs < 1
    ? value.toFixed(3)
    : abs < 10
      ? value.toFixed(2)
      : abs < 100
        ? value.toFixed(1)
        : value.toFixed(0);
}

/** One line `label  p50 … p99 … max … (n)` for a summary. */
export function line(label: string, s: Summary): string {
  return `${label.padEnd(34)} p50 ${ms(s.p50).padStart(7)} ms   p99 ${ms(s.p99).padStart(7)} ms   max ${ms(s.max).padStart(7)} ms   (n=${s.n})`;
}
