/**
 * Progress of a crawl: on a terminal, one bar redrawn in place with rate and ETA; in a log (not a
 * TTY), one plain line every few seconds. Written here rather than taken from a package: it is small.
 */

/** Where progress goes: a stream-like writer, `isTTY` and `columns` as `process.stderr` has them. */
export type ProgressOut = { write(text: string): unknown; isTTY?: boolean; columns?: number };

export type ProgressCounts = { done: number; total: number; pay: number; skip: number; recheck: number };

export type ProgressOptions = {
  label: string;
  total: number;
  out: ProgressOut;
  /** Milliseconds, monotonic. */
  now: () => number;
  /** Log mode: one line per this many milliseconds (default 5000). */
  logEveryMs?: number;
  /** Terminal mode: redraw at most this often (default 100). */
  redrawEveryMs?: number;
  /** Already done when the run resumed: counted as done, not in the rate. */
  alreadyDone?: number;
  /** What the three counts are called on the line (default `pay`, `skip`, `recheck`; known answers: pass, fail…). */
  names?: CountNames;
};

/** Display names of the three counts. */
export type CountNames = { pay: string; skip: string; recheck: string };

const VERDICT_NAMES: CountNames = { pay: 'pay', skip: 'skip', recheck: 'recheck' };

/**
 * Creates a reporter; call `tick` once per finished probe and `finish` at the end (prints the last state).
 * @example const progress = createProgress({ label: 'crawl', total: 10, out: process.stderr, now: () => performance.now() })
 */
export function createProgress(options: ProgressOptions) {
  const { out, now } = options;
  const tty = out.isTTY === true;
  const every = tty ? (options.redrawEveryMs ?? 100) : (options.logEveryMs ?? 5000);
  const startedAt = now();
  const resumed = options.alreadyDone ?? 0;
  const counts: ProgressCounts = { done: resumed, total: options.total, pay: 0, skip: 0, recheck: 0 };
  let lastDraw = Number.NEGATIVE_INFINITY;
  const draw = (final: boolean) => {
    const elapsed = now() - startedAt;
    const rate = elapsed > 0 ? ((counts.done - resumed) * 1000) / elapsed : 0;
    const line = formatProgress(options.label, counts, rate, tty ? (out.columns ?? 80) : null, options.names);
    out.write(tty ? `\r\u001b[K${line}${final ? '\n' : ''}` : `${line}\n`);
    lastDraw = now();
  };
  return {
    tick(verdict: 'pay' | 'skip' | 'recheck'): void {
      counts.done++;
      counts[verdict]++;
      if (now() - lastDraw >= every) draw(false);
    },
    finish(): void {
      draw(true);
    },
    counts,
  };
}

/**
 * One progress line: `label [#####-----] done/total pct rate/s ETA m:ss · pay N skip N recheck N`. The bar is
 * drawn only for a terminal of `columns` width (null: a log line without a bar).
 * @example formatProgress('crawl', { done: 5, total: 10, pay: 1, skip: 3, recheck: 1 }, 2.5, null)
 */
export function formatProgress(
  label: string,
  c: ProgressCounts,
  rate: number,
  columns: number | null,
  names: CountNames = VERDICT_NAMES,
): string {
  const fraction = c.total === 0 ? 1 : Math.min(1, c.done / c.total);
  const eta = rate > 0 ? (c.total - c.done) / rate : null;
  const tail =
    `${c.done}/${c.total} ${Math.floor(fraction * 100)}% ${rate.toFixed(1)}/s ETA ${duration(eta)}` +
    ` · ${names.pay} ${c.pay} ${names.skip} ${c.skip} ${names.recheck} ${c.recheck}`;
  if (columns === null) return `${label}: ${tail}`;
  const width = Math.max(10, Math.min(40, columns - tail.length - label.length - 4));
  const filled = Math.round(fraction * width);
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${tail}`;
}

/** Seconds as `m:ss` (or `h:mm:ss`); `--:--` when unknown. */
function duration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
