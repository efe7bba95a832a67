/**
 * An endpoint's public checks over a window (the site's endpoint page, docs/site.md "Endpoint, host and task pages"):
 * the price over time, the moments its wallet, network or price changed, its verdicts as bands, how long its terms
 * have been stable, the same facts as table rows, and the timeline as an SVG drawn at build time (no script; each
 * series labelled in words and marks, so it reads without colour). Pure.
 */
import { escapeXml } from './format.ts';

const DAY_MS = 86_400_000;

/** One published check of an endpoint (a line of a run's receipt index). */
export type EndpointCheck = {
  /** `issued_at` of the receipt, ISO 8601 UTC. */
  at: string;
  verdict: string;
  reason: string;
  /** The live price in USD; null unless the asset is the network's USDC, or when no terms were read. */
  price_usd: number | null;
  pay_to: string | null;
  network: string | null;
  receipt_id: string;
};

export type TermsField = 'price_usd' | 'pay_to' | 'network';

/** A change of one term between two checks that both read terms. */
export type TermsChange = {
  at: string;
  field: TermsField;
  from: string | number | null;
  to: string | number | null;
  receipt_id: string;
};

/** Consecutive checks with one verdict: from the first of them to the next band's first check (or the window's end). */
export type VerdictBand = { verdict: string; from: string; to: string; checks: number };

/** Consecutive checks with the same verdict, reason and terms: one row of the table fallback. */
export type CheckRow = {
  first: string;
  last: string;
  checks: number;
  verdict: string;
  reason: string;
  price_usd: number | null;
  pay_to: string | null;
  network: string | null;
  /** The newest receipt of the row. */
  receipt_id: string;
};

/** How long the terms have been the same: since the oldest check of the newest unbroken run of identical terms. */
export type Stability = {
  since: string;
  days: number;
  /** The run reaches back to the window's first check with terms: the terms may be older than the window shows. */
  at_least: boolean;
};

export type EndpointTimeline = {
  from: string;
  to: string;
  /** The checks inside the window, oldest first. */
  checks: EndpointCheck[];
  changes: TermsChange[];
  bands: VerdictBand[];
  rows: CheckRow[];
  /** Null when no check in the window read terms. */
  stable: Stability | null;
};

/**
 * The timeline of `checks` (any order) between `from` and `to`: checks outside the window are left out.
 * @example endpointTimeline(checks, new Date('2026-01-01'), new Date('2026-04-01')).stable?.days // 12
 */
export function endpointTimeline(checks: readonly EndpointCheck[], from: Date, to: Date): EndpointTimeline {
  const start = from.getTime();
  const end = to.getTime();
  const inWindow = checks
    .filter((c) => {
      const t = Date.parse(c.at);
      return t >= start && t <= end;
    })
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.receipt_id < b.receipt_id ? -1 : 1));
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    checks: inWindow,
    changes: termsChanges(inWindow),
    bands: verdictBands(inWindow, to.toISOString()),
    rows: checkRows(inWindow),
    stable: stability(inWindow, end),
  };
}

/** True when a check read payment terms; a check without (a timeout, no paywall) neither breaks nor starts a run. */
export function checkHasTerms(check: EndpointCheck): boolean {
  return check.price_usd !== null || check.pay_to !== null || check.network !== null;
}

/** Equality of a term; `0x` wallets ignore case (EIP-55 checksums are only casing). */
function sameTerm(a: string | number | null, b: string | number | null): boolean {
  if (typeof a === 'string' && typeof b === 'string' && a.startsWith('0x') && b.startsWith('0x'))
    return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

const FIELDS: readonly TermsField[] = ['pay_to', 'network', 'price_usd'];

function sameTerms(a: EndpointCheck, b: EndpointCheck): boolean {
  return FIELDS.every((f) => sameTerm(a[f], b[f]));
}

/** Every change of wallet, network or price between consecutive checks with terms, oldest first. */
export function termsChanges(oldestFirst: readonly EndpointCheck[]): TermsChange[] {
  const out: TermsChange[] = [];
  let previous: EndpointCheck | null = null;
  for (const check of oldestFirst) {
    if (!checkHasTerms(check)) continue;
    if (previous !== null)
      for (const field of FIELDS)
        if (!sameTerm(previous[field], check[field]))
          out.push({
            at: check.at,
            field,
            from: previous[field],
            to: check[field],
            receipt_id: check.receipt_id,
          });
    previous = check;
  }
  return out;
}

function verdictBands(oldestFirst: readonly EndpointCheck[], end: string): VerdictBand[] {
  const bands: VerdictBand[] = [];
  for (const check of oldestFirst) {
    const last = bands.at(-1);
    if (last !== undefined && last.verdict === check.verdict) {
      last.checks++;
      continue;
    }
    if (last !== undefined) last.to = check.at;
    bands.push({ verdict: check.verdict, from: check.at, to: end, checks: 1 });
  }
  return bands;
}

function checkRows(oldestFirst: readonly EndpointCheck[]): CheckRow[] {
  const rows: CheckRow[] = [];
  for (const c of oldestFirst) {
    const last = rows.at(-1);
    if (
      last !== undefined &&
      last.verdict === c.verdict &&
      last.reason === c.reason &&
      FIELDS.every((f) => sameTerm(last[f], c[f]))
    ) {
      last.last = c.at;
      last.checks++;
      last.receipt_id = c.receipt_id;
      continue;
    }
    rows.push({
      first: c.at,
      last: c.at,
      checks: 1,
      verdict: c.verdict,
      reason: c.reason,
      price_usd: c.price_usd,
      pay_to: c.pay_to,
      network: c.network,
      receipt_id: c.receipt_id,
    });
  }
  return rows;
}

function stability(oldestFirst: readonly EndpointCheck[], now: number): Stability | null {
  const withTerms = oldestFirst.filter(checkHasTerms);
  const newest = withTerms.at(-1);
  if (newest === undefined) return null;
  let i = withTerms.length - 1;
  while (i > 0 && sameTerms(withTerms[i - 1] as EndpointCheck, newest)) i--;
  const since = (withTerms[i] as EndpointCheck).at;
  return { since, days: Math.max(0, Math.floor((now - Date.parse(since)) / DAY_MS)), at_least: i === 0 };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * A day as people read it, unambiguous in every locale: `3 Mar 2026` (UTC).
 * @example formatDay('2026-03-03T10:00:00Z') // '3 Mar 2026'
 */
export function formatDay(iso: string, withYear = true): string {
  const d = new Date(iso);
  const day = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
  return withYear ? `${day} ${d.getUTCFullYear()}` : day;
}

/**
 * A wallet or other long hex value shortened for reading, the full value kept by the caller (title, copy):
 * `0x1234…cdef`.
 * @example shortHex('0x1234567890abcdef1234567890abcdef12345678') // '0x1234…5678'
 */
export function shortHex(value: string): string {
  return /^0x[0-9a-fA-F]{12,}$/.test(value) ? `${value.slice(0, 6)}…${value.slice(-4)}` : value;
}

/** The colours of the verdicts (the site's palette); every band also carries its verdict in words. */
export const VERDICT_COLORS: Readonly<Record<string, string>> = {
  pay: '#1b5e20',
  skip: '#991b1b',
  recheck: '#92400e',
};

/**
 * What tells the verdicts apart without colour, in the bands and the legend alike: pay is solid, skip striped,
 * recheck dotted (skip's red and recheck's brown are both dark and warm, and alike to many eyes). The ids are
 * prefixed because the drawing is inline in its page.
 */
const VERDICT_PATTERNS: Readonly<Record<string, string>> = {
  skip: '<rect width="6" height="6" fill="COLOR"/><rect width="2.5" height="6" fill="#ffffff" fill-opacity=".4"/>',
  recheck:
    '<rect width="6" height="6" fill="COLOR"/><circle cx="3" cy="3" r="1.4" fill="#ffffff" fill-opacity=".5"/>',
};

/** The fill of a verdict's band and legend swatch: its pattern where it has one, else its colour. */
function verdictFill(verdict: string): string {
  if (VERDICT_PATTERNS[verdict] !== undefined) return `url(#sc-verdict-${verdict})`;
  return VERDICT_COLORS[verdict] ?? '#4b5563';
}

function patternDefs(): string {
  const defs = Object.entries(VERDICT_PATTERNS).map(
    ([verdict, shapes]) =>
      `<pattern id="sc-verdict-${verdict}" width="6" height="6" patternUnits="userSpaceOnUse"${verdict === 'skip' ? ' patternTransform="rotate(45)"' : ''}>${shapes.replace('COLOR', VERDICT_COLORS[verdict] ?? '#4b5563')}</pattern>`,
  );
  return `<defs>${defs.join('')}</defs>`;
}

const W = 720;
const H = 250;
const PLOT = { left: 64, right: W - 16, top: 52, bottom: 150 };
const BAND = { top: 162, bottom: 186 };
const PRICE_COLOR = '#1d4ed8';
const WALLET_COLOR = '#6d28d9';
const NETWORK_COLOR = '#0f766e';

/** The timeline's scales: where an instant and a price fall on the drawing. */
type Scale = {
  timeline: EndpointTimeline;
  x: (iso: string) => number;
  y: (price: number) => number;
  /** The checks that read a USDC price, and the highest of those prices (0 with none). */
  priced: EndpointCheck[];
  max: number;
};

function scaleOf(timeline: EndpointTimeline): Scale {
  const t0 = Date.parse(timeline.from);
  const t1 = Date.parse(timeline.to);
  const priced = timeline.checks.filter((c) => c.price_usd !== null);
  const max = Math.max(0, ...priced.map((c) => c.price_usd as number));
  const top = max > 0 ? max * 1.2 : 1;
  return {
    timeline,
    x: (iso) => PLOT.left + ((Date.parse(iso) - t0) / Math.max(1, t1 - t0)) * (PLOT.right - PLOT.left),
    y: (price) => PLOT.bottom - (price / top) * (PLOT.bottom - PLOT.top),
    priced,
    max,
  };
}

/**
 * The timeline as an SVG string: the price as a step line with a dot per check, a dashed marker at each wallet
 * (◆), network (▲) and price change, the verdicts as labelled bands under it, and dated ticks (UTC). Every mark has
 * a `<title>`; the page shows the same facts as a table.
 */
export function timelineSvg(timeline: EndpointTimeline, title: string): string {
  const s = scaleOf(timeline);
  const body = [axesSvg(s), dateTicksSvg(s), bandsSvg(s), changesSvg(s), priceSvg(s)].join('');
  const label = escapeXml(title);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}" font-family="system-ui, sans-serif" font-size="12" fill="#1f2937">` +
    `<title>${label}</title>${patternDefs()}${legendSvg()}${body}</svg>`
  );
}

/** The axis and the price scale (or a note that no price was read). */
function axesSvg({ y, max }: Scale): string {
  const e = escapeXml;
  const out = [
    `<line x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="#6b7280"/>`,
    `<text x="${PLOT.left - 6}" y="${PLOT.bottom + 4}" text-anchor="end">$0</text>`,
  ];
  if (max > 0)
    out.push(
      `<line x1="${PLOT.left}" y1="${n(y(max))}" x2="${PLOT.right}" y2="${n(y(max))}" stroke="#d1d5db" stroke-dasharray="2 3"/>`,
      `<text x="${PLOT.left - 6}" y="${n(y(max) + 4)}" text-anchor="end">$${e(trimPrice(max))}</text>`,
    );
  else
    out.push(
      `<text x="${n((PLOT.left + PLOT.right) / 2)}" y="${n((PLOT.top + PLOT.bottom) / 2)}" text-anchor="middle" fill="#4b5563">No USDC price read in this window</text>`,
    );
  return out.join('');
}

/** Date ticks every 15 days from the window's first midnight, the year on the first and at each new year. */
function dateTicksSvg({ timeline, x }: Scale): string {
  const e = escapeXml;
  const t0 = Date.parse(timeline.from);
  const t1 = Date.parse(timeline.to);
  const out: string[] = [];
  let previousYear = -1;
  for (let t = Math.ceil(t0 / DAY_MS) * DAY_MS; t <= t1; t += 15 * DAY_MS) {
    const iso = new Date(t).toISOString();
    const year = new Date(t).getUTCFullYear();
    const tx = n(x(iso));
    out.push(
      `<line x1="${tx}" y1="${BAND.bottom}" x2="${tx}" y2="${BAND.bottom + 5}" stroke="#6b7280"/>`,
      `<text x="${tx}" y="${BAND.bottom + 18}" text-anchor="middle">${e(formatDay(iso, year !== previousYear))}</text>`,
    );
    previousYear = year;
  }
  out.push(
    `<text x="${PLOT.right}" y="${H - 8}" text-anchor="end" fill="#4b5563">dates in UTC, ${e(formatDay(timeline.from))} to ${e(formatDay(timeline.to))}</text>`,
  );
  return out.join('');
}

/** The verdict bands, each labelled with its verdict when there is room. */
function bandsSvg({ timeline, x }: Scale): string {
  const e = escapeXml;
  const out = [`<text x="${PLOT.left - 6}" y="${BAND.bottom - 8}" text-anchor="end">verdict</text>`];
  for (const band of timeline.bands) {
    const bx = x(band.from);
    const bw = Math.max(2, x(band.to) - bx);
    const color = VERDICT_COLORS[band.verdict] ?? '#4b5563';
    const fill = verdictFill(band.verdict);
    const words = `${band.verdict} from ${formatDay(band.from)} (${band.checks} check${band.checks === 1 ? '' : 's'})`;
    out.push(
      `<g><title>${e(words)}</title><rect x="${n(bx)}" y="${BAND.top}" width="${n(bw)}" height="${BAND.bottom - BAND.top}" fill="${fill}"/>`,
    );
    const label = bw >= 44 ? band.verdict : bw >= 12 ? band.verdict.slice(0, 1) : '';
    if (label !== '')
      out.push(
        `<text x="${n(bx + bw / 2)}" y="${BAND.bottom - 8}" text-anchor="middle" fill="#ffffff" font-weight="700" stroke="${color}" stroke-width="3" paint-order="stroke">${e(label)}</text>`,
      );
    out.push('</g>');
  }
  return out.join('');
}

/** Each change of terms: a dashed line across the plot and a labelled mark above it. */
function changesSvg({ timeline, x }: Scale): string {
  const e = escapeXml;
  const out: string[] = [];
  for (const change of timeline.changes) {
    const cx = n(x(change.at));
    const { color, label, mark } =
      change.field === 'pay_to'
        ? { color: WALLET_COLOR, label: 'wallet changed', mark: diamond(x(change.at), PLOT.top - 8) }
        : change.field === 'network'
          ? { color: NETWORK_COLOR, label: 'network changed', mark: triangle(x(change.at), PLOT.top - 8) }
          : { color: PRICE_COLOR, label: 'price changed', mark: '' };
    const words = `${label} on ${formatDay(change.at)}: ${String(change.from ?? 'none')} to ${String(change.to ?? 'none')}`;
    const anchor = x(change.at) > PLOT.right - 90 ? 'end' : 'start';
    const dx = anchor === 'end' ? -8 : 8;
    out.push(
      `<g class="change" data-field="${change.field}" data-at="${e(change.at)}"><title>${e(words)}</title>`,
      `<line x1="${cx}" y1="${PLOT.top - 8}" x2="${cx}" y2="${PLOT.bottom}" stroke="${color}" stroke-dasharray="4 3"/>`,
      mark === '' ? '' : mark.replace('/>', ` fill="${color}"/>`),
      change.field === 'price_usd'
        ? ''
        : `<text x="${n(x(change.at) + dx)}" y="${PLOT.top - 4}" text-anchor="${anchor}" fill="${color}">${e(`${label} ${formatDay(change.at, false)}`)}</text>`,
      '</g>',
    );
  }
  return out.join('');
}

/** The price: a step line (a price holds until the next check reads another), a dot per check, a label at its end. */
function priceSvg({ timeline, x, y, priced }: Scale): string {
  const e = escapeXml;
  if (priced.length === 0) return '';
  let d = '';
  priced.forEach((c, i) => {
    const px = n(x(c.at));
    const py = n(y(c.price_usd as number));
    d += i === 0 ? `M${px} ${py}` : `H${px}V${py}`;
  });
  const last = priced.at(-1) as EndpointCheck;
  const out = [`<path d="${d}H${n(x(timeline.to))}" fill="none" stroke="${PRICE_COLOR}" stroke-width="2"/>`];
  for (const c of priced)
    out.push(
      `<circle cx="${n(x(c.at))}" cy="${n(y(c.price_usd as number))}" r="3" fill="${PRICE_COLOR}"><title>${e(`${formatDay(c.at)}: $${trimPrice(c.price_usd as number)}, ${c.verdict}`)}</title></circle>`,
    );
  const ly = y(last.price_usd as number) - 8;
  out.push(
    `<text x="${n(Math.min(x(last.at), PLOT.right))}" y="${n(Math.max(PLOT.top + 10, ly))}" text-anchor="end" fill="${PRICE_COLOR}">price $${e(trimPrice(last.price_usd as number))}</text>`,
  );
  return out.join('');
}

function legendSvg(): string {
  return [
    `<line x1="8" y1="14" x2="28" y2="14" stroke="${PRICE_COLOR}" stroke-width="2"/><text x="32" y="18">price (USD)</text>`,
    `${diamond(128, 14).replace('/>', ` fill="${WALLET_COLOR}"/>`)}<text x="138" y="18">wallet changed</text>`,
    `${triangle(250, 14).replace('/>', ` fill="${NETWORK_COLOR}"/>`)}<text x="260" y="18">network changed</text>`,
    ...Object.keys(VERDICT_COLORS).map(
      (verdict, i) =>
        `<rect x="${378 + i * 80}" y="6" width="14" height="14" fill="${verdictFill(verdict)}"/><text x="${396 + i * 80}" y="18">${verdict}</text>`,
    ),
  ].join('');
}

function diamond(cx: number, cy: number): string {
  return `<path d="M${n(cx)} ${n(cy - 6)}L${n(cx + 6)} ${n(cy)}L${n(cx)} ${n(cy + 6)}L${n(cx - 6)} ${n(cy)}Z"/>`;
}

function triangle(cx: number, cy: number): string {
  return `<path d="M${n(cx)} ${n(cy - 6)}L${n(cx + 6)} ${n(cy + 5)}L${n(cx - 6)} ${n(cy + 5)}Z"/>`;
}

/** A USD price without trailing zeros: `0.002`. */
function trimPrice(value: number): string {
  return value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

function n(value: number): string {
  return String(Math.round(value * 10) / 10);
}
