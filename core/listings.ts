/**
 * Listing files: a JSON array of `{"url", "method"?, "price_usd"?, "network"?, "asset"?, "pay_to"?, "source"}`,
 * as `npm run listings:import` takes them (the crawl fills the same store later). Hostile or sloppy input: every
 * record goes through the schema, and a file with any bad record is refused whole, naming the record.
 */
import * as v from 'valibot';
import type { Listing } from './model.ts';
import { normalizeNetwork } from './networks.ts';
import { isPlainIdentifier } from './text.ts';
import { parseTargetUrl } from './url.ts';

// These are signed into receipts as `expected_*`: nothing invisible or reordering (issue 12 item 9).
const visible = v.check(isPlainIdentifier, 'must hold no whitespace or hidden characters');
const Record = v.strictObject({
  url: v.string(),
  method: v.optional(v.picklist(['GET', 'POST']), 'GET'),
  price_usd: v.optional(v.nullable(v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1_000_000)))),
  network: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(64), visible))),
  asset: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(128), visible))),
  pay_to: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(128), visible))),
  source: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a source name of [a-z0-9._-]')),
});

export const MAX_LISTINGS = 200_000;

export type ListingRow = Listing & { urlNorm: string };

/** Validates a parsed listings file; the error names the first bad record. */
export function parseListings(
  value: unknown,
): { ok: true; rows: ListingRow[] } | { ok: false; message: string } {
  if (!Array.isArray(value)) return { ok: false, message: 'a listings file is a JSON array of records' };
  if (value.length > MAX_LISTINGS) return { ok: false, message: `at most ${MAX_LISTINGS} records per file` };
  const rows: ListingRow[] = [];
  for (const [index, item] of value.entries()) {
    const parsed = v.safeParse(Record, item);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      const path = issue.path?.map((part) => String(part.key)).join('.') ?? '';
      return { ok: false, message: `record ${index}${path ? ` (${path})` : ''}: ${issue.message}` };
    }
    const record = parsed.output;
    const target = parseTargetUrl(record.url);
    if (!target.ok) return { ok: false, message: `record ${index} (url): ${target.message}` };
    rows.push({
      url: target.url.href,
      urlNorm: target.normalized,
      method: record.method,
      priceUsd: record.price_usd ?? null,
      network: record.network ? normalizeNetwork(record.network) : null,
      asset: record.asset ?? null,
      payTo: record.pay_to ?? null,
      source: record.source,
    });
  }
  return { ok: true, rows };
}
