/**
 * The saves list (docs/api.md §1.6, §4 `/saves.json`; docs/data-files.md): endpoints of the last 30 days whose live 402
 * asked more, paid another wallet or used another network than their listing, with the receipt redacted of
 * anything about who asked. Each run's list carries the previous run's entries still inside the window, so the
 * list spans runs without reading them all.
 */
import { type CrawlFacts, termsSideBySide } from './crawl-facts.ts';
import { reasonText } from './reasons.ts';

export const SAVES_WINDOW_DAYS = 30;

const KIND = {
  price_mismatch: 'asked_more',
  pay_to_mismatch: 'other_wallet',
  network_mismatch: 'other_network',
} as const;

/** Receipt members about who asked: never in a public list. */
const WHO_ASKED = ['client', 'ref', 'task', 'access'] as const;

export type SaveEntry = {
  id: string;
  url: string;
  url_norm: string;
  method: 'GET' | 'POST';
  kind: (typeof KIND)[keyof typeof KIND];
  reason_code: string;
  reason: string;
  listed_price_usd: number | null;
  quoted_price_usd: number | null;
  listed_pay_to: string | null;
  pay_to: string | null;
  listed_network: string | null;
  network: string | null;
  source_list: string;
  also_listed_in: string[];
  timestamp: string;
  run_id: string;
  permalink: string;
  receipt: Record<string, unknown>;
};

/**
 * The saves list as of `now`: this run's mismatches against a listing, then the earlier entries still inside the
 * window; one entry per endpoint (the newest), newest first. An endpoint whose listings this run found disputed
 * keeps no earlier entry: the listing it was held to then is one side of the dispute.
 */
export function buildSaves(input: {
  now: Date;
  runId: string;
  /** Every probe of the run (iterated twice). */
  facts: Iterable<CrawlFacts>;
  receipts: ReadonlyMap<string, Record<string, unknown>>;
  earlier: readonly SaveEntry[];
}) {
  const since = new Date(input.now.getTime() - SAVES_WINDOW_DAYS * 86_400_000).toISOString();
  const fresh: SaveEntry[] = [];
  for (const f of input.facts) {
    if (f.expected_source !== 'listing' || !(f.reason in KIND)) continue;
    const receipt = input.receipts.get(f.id);
    if (receipt === undefined) continue;
    fresh.push({
      id: f.short_id,
      url: f.url,
      url_norm: f.url_norm,
      method: f.method,
      kind: KIND[f.reason as keyof typeof KIND],
      reason_code: f.reason,
      reason: reasonText(f.reason),
      ...termsSideBySide(f),
      source_list: f.source_list,
      also_listed_in: f.also_listed_in,
      timestamp: f.probed_at,
      run_id: input.runId,
      permalink: f.receipt_url,
      receipt: redact(receipt),
    });
  }
  const seen = new Set<string>();
  for (const f of input.facts) if (f.disputed) seen.add(f.url_norm);
  const saves = [...fresh, ...input.earlier]
    .filter((entry) => entry.timestamp >= since)
    .sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0))
    .filter((entry) => !seen.has(entry.url_norm) && seen.add(entry.url_norm) !== undefined);
  return {
    schema: 1,
    generated_at: input.now.toISOString(),
    window_days: SAVES_WINDOW_DAYS,
    since,
    count: saves.length,
    saves,
  };
}

/**
 * A receipt without the members about who asked. When any was removed, `kid` and `signature` go too (they would
 * no longer verify) and `redacted: true` says so; the permalink serves the signed original.
 */
export function redact(receipt: Record<string, unknown>): Record<string, unknown> {
  if (!WHO_ASKED.some((key) => key in receipt)) return receipt;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(receipt)) {
    if (!(WHO_ASKED as readonly string[]).includes(key) && key !== 'kid' && key !== 'signature')
      out[key] = value;
  }
  out['redacted'] = true;
  return out;
}
