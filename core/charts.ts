/**
 * Small SVG bar charts for the crawl statistics page: plain markup, no script, readable without colour (each
 * bar carries its value as text, and the page shows the same numbers in a table). Pure.
 */
import { escapeXml } from './format.ts';

/** One bar: a label under it and its parts, stacked bottom-up in the order given. */
export type Bar = { label: string; parts: readonly number[] };

export type ChartOptions = {
  title: string;
  /** Names and colours of the parts, in the order of `Bar.parts`. */
  series: ReadonlyArray<{ name: string; color: string }>;
  width?: number;
  height?: number;
};

const PAD = { top: 40, right: 8, bottom: 34, left: 8 };

/**
 * A stacked bar chart as an SVG string (a single series is a plain bar chart).
 * @example barChart([{ label: 'run 1', parts: [3, 1] }], { title: 'Verdicts', series: [{ name: 'pay', color: '#2e7d32' }, { name: 'skip', color: '#b91c1c' }] })
 */
export function barChart(bars: readonly Bar[], options: ChartOptions): string {
  const width = options.width ?? 640;
  const height = options.height ?? 220;
  const plotH = height - PAD.top - PAD.bottom;
  const plotW = width - PAD.left - PAD.right;
  const max = Math.max(1, ...bars.map((bar) => sum(bar.parts)));
  const slot = plotW / Math.max(1, bars.length);
  const barW = Math.min(64, slot * 0.6);
  const out: string[] = [];
  bars.forEach((bar, i) => {
    const x = PAD.left + slot * i + (slot - barW) / 2;
    let y = PAD.top + plotH;
    bar.parts.forEach((value, p) => {
      const h = (value / max) * plotH;
      y -= h;
      const color = options.series[p]?.color ?? '#6b7280';
      out.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(barW)}" height="${n(h)}" fill="${color}"/>`);
    });
    const cx = n(x + barW / 2);
    out.push(`<text x="${cx}" y="${n(y - 4)}" text-anchor="middle">${sum(bar.parts)}</text>`);
    out.push(
      `<text x="${cx}" y="${height - PAD.bottom + 14}" text-anchor="middle">${escapeXml(bar.label)}</text>`,
    );
  });
  const legend = options.series
    .map(
      (s, i) =>
        `<rect x="${8 + i * 110}" y="6" width="10" height="10" fill="${s.color}"/><text x="${22 + i * 110}" y="15">${escapeXml(s.name)}</text>`,
    )
    .join('');
  const title = escapeXml(options.title);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="${title}" font-family="system-ui, sans-serif" font-size="11" fill="#1f2937">` +
    `<title>${title}</title>${options.series.length > 1 ? legend : ''}` +
    `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${width - PAD.right}" y2="${PAD.top + plotH}" stroke="#9ca3af"/>` +
    `${out.join('')}</svg>`
  );
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function n(value: number): string {
  return String(Math.round(value * 10) / 10);
}
