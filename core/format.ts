/**
 * How the public site writes values for people: prices, times, verdicts and the facts of a receipt. Pure, so
 * the pages stay thin and every page writes a price or a time the same way.
 */
import { isReason, reasonText } from './reasons.ts';

/**
 * A USD price with as many decimals as it needs (at least two, at most six); an em dash for none.
 * @example formatUsd(0.0125) // 'USD 0.0125'
 */
export function formatUsd(value: number | null | undefined): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const fixed = value.toFixed(6).replace(/0+$/, '');
  const [whole = '0', fraction = ''] = fixed.split('.');
  return `USD ${whole}.${fraction.padEnd(2, '0')}`;
}

/**
 * An ISO time as `YYYY-MM-DD HH:MM UTC` (the site shows UTC only, as the files do).
 * @example formatTime('2026-11-24T01:02:03.456Z') // '2026-11-24 01:02 UTC'
 */
export function formatTime(iso: string | null | undefined): string {
  if (typeof iso !== 'string' || !Number.isFinite(Date.parse(iso))) return '—';
  return `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * Escapes text for XML and HTML, in text and in attribute values quoted either way: `&`, `<`, `>`, `"` and `'`
 * (as `&#39;`, which XML, SVG and HTML all read). The one escaper of the site, the charts, the badges and the
 * badge snippets.
 * @example escapeXml(`<a href="x">it's</a>`) // '&lt;a href=&quot;x&quot;&gt;it&#39;s&lt;/a&gt;'
 */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A whole number with thousands separators: `12,345`. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A share as a whole percent of a total (`0 %` of nothing). */
export function formatShare(part: number, total: number): string {
  return `${total > 0 ? Math.round((part / total) * 100) : 0} %`;
}

/** Plain words for a reason code; unknown codes are shown as they are. */
export function reasonWords(code: string): string {
  return isReason(code) ? reasonText(code) : code;
}

/** The value of an optional text member, or an em dash. */
export function orDash(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : '—';
}

/** One labelled fact on a receipt page. */
export type Fact = { label: string; value: string; code?: boolean };

/** What a receipt page shows, in order: the decision, why, the terms, the signature. */
export type ReceiptView = {
  id: string;
  title: string;
  verdict: string;
  reasonCode: string;
  why: string;
  decision: Fact[];
  terms: Fact[];
  signature: Fact[];
  signed: boolean;
  badgeMarkdown: string | null;
};

/**
 * The facts of one signed check receipt for its page. Reads members defensively: a receipt from an older
 * version may lack some, and the page shows a dash for them.
 * @example receiptView(receipt).decision[0] // { label: 'Verdict', value: 'pay' }
 */
export function receiptView(receipt: Record<string, unknown>): ReceiptView {
  const r = receipt;
  const reasonCode = orDash(r.reason_code ?? r.reason);
  const history = (r.history ?? {}) as Record<string, unknown>;
  const listing = (r.listing ?? null) as Record<string, unknown> | null;
  const badge = (r.badge ?? null) as { markdown?: unknown } | null;
  return {
    id: String(r.id),
    title: `${orDash(r.method)} ${orDash(r.url)}`,
    verdict: orDash(r.verdict),
    reasonCode,
    why: reasonWords(reasonCode),
    decision: [
      { label: 'Verdict', value: orDash(r.verdict) },
      { label: 'Reason code', value: reasonCode, code: true },
      { label: 'Confidence', value: orDash(r.confidence) },
      { label: 'Checked', value: formatTime(r.issued_at as string) },
      { label: 'HTTP status', value: orDash(r.http_status) },
      { label: 'Check type', value: orDash(r.check_type) },
      { label: 'Expectation from', value: orDash(r.expected_source ?? (listing ? 'listing' : null)) },
      {
        label: 'Stable for',
        value: typeof history.stable_for_days === 'number' ? `${history.stable_for_days} days` : '—',
      },
      ...(listing ? [{ label: 'Listed in', value: orDash(listing.source) }] : []),
    ],
    terms: [
      { label: 'Quoted price', value: formatUsd(r.quoted_price_usd as number | null) },
      {
        label: 'Listed or claimed price',
        value: formatUsd((listing?.price_usd ?? r.claimed_price_usd) as number | null),
      },
      { label: 'Pay to', value: orDash(r.pay_to), code: true },
      { label: 'Expected pay to', value: orDash(r.expected_pay_to), code: true },
      { label: 'Network', value: orDash(r.network), code: true },
      { label: 'Expected network', value: orDash(r.expected_network), code: true },
      { label: 'Asset', value: orDash(r.asset), code: true },
      { label: 'Payment terms SHA-256', value: orDash(r.payment_terms_sha256), code: true },
    ],
    signature: [
      { label: 'Key id (kid)', value: orDash(r.kid), code: true },
      { label: 'Signature (Ed25519, base64url)', value: orDash(r.signature), code: true },
    ],
    signed: typeof r.signature === 'string',
    badgeMarkdown: typeof badge?.markdown === 'string' ? badge.markdown : null,
  };
}
