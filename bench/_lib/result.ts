/**
 * What every benchmark returns to `bench/main.ts`: named figures, each with an optional target, plus notes.
 * A bench module exports `run(): Promise<Result>` and prints its own figures as it goes.
 */

/** A target a figure must meet: `value <= limit` (`max`) or `value >= limit` (`min`). */
export type Target = { max: number } | { min: number };

/** One measured figure. */
export type Figure = { name: string; value: number; unit: string; target?: Target };

/** The outcome of one benchmark. */
export type Result = { bench: string; figures: Figure[]; notes: string[] };

/** The shape of a bench module. */
export type BenchModule = { run(): Promise<Result> };

/** PASS or MISS for a figure with a target, '' without one. */
export function verdictOf(figure: Figure): 'PASS' | 'MISS' | '' {
  const t = figure.target;
  if (t === undefined) return '';
  const ok = 'max' in t ? figure.value <= t.max : figure.value >= t.min;
  return ok ? 'PASS' : 'MISS';
}

/** The target as text: `<= 2 ms`, `>= 40 %`. */
export function targetText(figure: Figure): string {
  const t = figure.target;
  if (t === undefined) return '';
  return 'max' in t ? `<= ${t.max} ${figure.unit}` : `>= ${t.min} ${figure.unit}`;
}

/** A positive integer from the environment (benchmark knobs such as `BENCH_LATENCY_N`), else `fallback`. */
export function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`bench: ${name} must be a positive integer`);
  return value;
}

/** Rounds for display and for the summary table. */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
