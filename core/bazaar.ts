/**
 * The daily bazaar check (docs/api.md §1.6, §4 `/bazaar.json`; docs/data-files.md): the top results of a discovery
 * search, each checked like the crawl, in the search's order, with the day's date.
 */
import { type CrawlFacts, termsSideBySide } from './crawl-facts.ts';
import { reasonText } from './reasons.ts';
import type { SourceReport } from './source-listing.ts';

/** Builds `bazaar.json`. `facts` are in the search's order (rank 1 first). */
export function buildBazaar(input: {
  runId: string;
  checkedAt: Date;
  source: { url: string; query: string; top: number; report: SourceReport };
  facts: readonly CrawlFacts[];
}) {
  const count = (verdict: string) => input.facts.filter((f) => f.verdict === verdict).length;
  return {
    schema: 1,
    date: input.checkedAt.toISOString().slice(0, 10),
    checked_at: input.checkedAt.toISOString(),
    run_id: input.runId,
    source: {
      url: input.source.url,
      query: input.source.query,
      top: input.source.top,
      ...input.source.report,
    },
    check_type: 'dry-run',
    pay: count('pay'),
    skip: count('skip'),
    recheck: count('recheck'),
    results: input.facts.map((f, i) => ({
      rank: i + 1,
      url: f.url,
      method: f.method,
      verdict: f.verdict,
      reason_code: f.reason,
      reason: reasonText(f.reason),
      ...termsSideBySide(f),
      http_status: f.http_status,
      timestamp: f.probed_at,
      id: f.short_id,
      receipt_id: f.id,
      permalink: f.receipt_url,
    })),
  };
}
