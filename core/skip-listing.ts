/**
 * The skip listing of docs/api.md §2.10 (docs/data-files.md `skips/<page>.json`): pages of 500 skip records of one run,
 * with every top-level member of the spec.
 */
import type { CrawlFacts } from './crawl-facts.ts';
import type { RunSummary } from './crawl-summary.ts';
import { LIMITS, priceText } from './limits.ts';
import { reasonText } from './reasons.ts';

/** docs/api.md §8: skip listing page size. */
export const SKIP_PAGE_SIZE = 500;

/** docs/api.md §2.10 `dedupe`. */
export const DEDUPE_RULE =
  'lower-case scheme and host, no default port, no fragment, no trailing slash, sorted query';

/** docs/api.md §2.10 `method`: how the crawl probes. */
export const CRAWL_METHOD =
  'One unpaid GET or POST per listed URL, as listed; the listing’s example parameters only when the bare URL answered 4xx; ' +
  '5 second timeout; gated against server-side request forgery; at most 3 requests in flight per host, 12 per ' +
  'registrable domain and 32 per server address and port, whatever names lead there (a registrable domain is one ' +
  'operator’s many names, wildcard DNS included; one address of a CDN fronts many sellers, hence well above 3); ' +
  'never pays. A crawl that could read none of its listing sources publishes nothing; an endpoint listed only by ' +
  'sources that failed keeps its last receipt, marked with carried_from.';

/** Reasons where the live 402 differed from the listing it was held to. */
export const MISMATCH_REASONS = new Set(['price_mismatch', 'pay_to_mismatch', 'network_mismatch']);

/** One skip record of docs/api.md §2.10, members in the spec's order. */
export type SkipRecord = {
  id: string;
  url: string;
  claimed_price_usd?: number;
  quoted_price_usd?: number;
  pay_to: string;
  verdict: 'skip';
  reason: string;
  reason_code: string;
  timestamp: string;
  source_list: string;
  also_listed_in: string[];
  check_type: 'dry-run';
  method: 'GET' | 'POST';
  http_status: number;
  /** Only when the probe ended before a 402: why (`core/probe-state.ts`). */
  probe_state?: string;
  network: string;
  listed_network: string;
  listed_pay_to: string;
  permalink: string;
  /** Only on a record carried from an earlier run (docs/data-files.md "When a source fails"): that run's id. */
  carried_from?: string;
};

/**
 * Every page of a run's skip listing (at least one). Records are ordered by reason code, then normalized URL, then
 * method, so pages are stable between builds of one run. `carried` are the lines kept from an earlier run because
 * their sources failed: their skips are listed too, each with `carried_from`, and the counts stay this run's.
 * @example buildSkipPages(facts, summary, 'https://spotcheck.example', null)[0].pages
 */
export function buildSkipPages(
  facts: readonly CrawlFacts[],
  summary: RunSummary,
  baseUrl: string,
  previous: { run_id: string; crawled_at: string; endpoints_covered: number } | null,
  carried: readonly CrawlFacts[] = [],
) {
  const skips = [...facts, ...carried]
    .filter((f) => f.verdict === 'skip')
    .sort((a, b) => cmp(a.reason, b.reason) || cmp(a.url_norm, b.url_norm) || cmp(a.method, b.method));
  const pages = Math.max(1, Math.ceil(skips.length / SKIP_PAGE_SIZE));
  const json = (page: number) => `${baseUrl}/v1/skips.json?page=${page}`;
  const check = `${baseUrl}/v1/products/endpoint-spot-check`;
  const featured = skips
    .filter((f) => MISMATCH_REASONS.has(f.reason) && f.carried_from === undefined)
    .sort((a, b) => cmp(b.probed_at, a.probed_at))[0];
  const out = [];
  for (let page = 1; page <= pages; page++) {
    const slice = skips.slice((page - 1) * SKIP_PAGE_SIZE, page * SKIP_PAGE_SIZE);
    const example = slice[0] ?? null;
    out.push({
      schema: 1,
      free_check: {
        url: check,
        example: `${check}?url=${encodeURIComponent(example?.url ?? 'https://seller.example/paid')}`,
        example_response: example === null ? null : freeAnswerOf(example),
        // biome-ignore lint/suspicious/noThenProperty: docs/api.md §2.10 names this member `then`.
        then: `${LIMITS.freeChecksPerDay} free checks per client per UTC day; then ${priceText(LIMITS.checkPriceAtomic)} per check, paid with x402 (USDC on Base).`,
      },
      endpoints_covered: summary.endpoints_covered,
      new_this_week: summary.new_this_week,
      previous_run: previous,
      crawled_at: summary.crawled_at,
      total_receipts: summary.total_receipts,
      skip: summary.skip,
      pay: summary.pay,
      recheck: summary.recheck,
      carried: summary.carried,
      delisted: summary.delisted,
      check_type: 'dry-run',
      lists: summary.lists,
      listed_in: summary.listed_in,
      sources: summary.sources,
      dedupe: DEDUPE_RULE,
      method: CRAWL_METHOD,
      spot_check: check,
      featured_mismatch: featured?.receipt_url ?? null,
      skip_pages: Array.from({ length: pages }, (_, i) => json(i + 1)),
      page_size: SKIP_PAGE_SIZE,
      receipts: `${baseUrl}/v1/receipts`,
      skips_html: `${baseUrl}/v1/skips`,
      skips_json: `${baseUrl}/v1/skips.json`,
      receipt_by_url: `${baseUrl}/v1/receipts/by-url?url=`,
      page,
      pages,
      next: page < pages ? json(page + 1) : null,
      prev: page > 1 ? json(page - 1) : null,
      skips: slice.map(skipRecordOf),
    });
  }
  return out;
}

/** The skip record of one probe (docs/api.md §2.10 table); unknown strings are `""`, no HTTP answer is status 0. */
export function skipRecordOf(f: CrawlFacts): SkipRecord {
  return {
    id: f.short_id,
    url: f.url,
    ...(f.listed_price_usd === null ? {} : { claimed_price_usd: f.listed_price_usd }),
    ...(f.quoted_price_usd === null ? {} : { quoted_price_usd: f.quoted_price_usd }),
    pay_to: f.pay_to ?? '',
    verdict: 'skip',
    reason: reasonText(f.reason),
    reason_code: f.reason,
    timestamp: f.probed_at,
    source_list: f.source_list,
    also_listed_in: f.also_listed_in,
    check_type: 'dry-run',
    method: f.method,
    http_status: f.http_status ?? 0,
    ...(f.probe_state === undefined ? {} : { probe_state: f.probe_state }),
    network: f.network ?? '',
    listed_network: f.listed_network ?? '',
    listed_pay_to: f.listed_pay_to ?? '',
    permalink: f.receipt_url,
    ...(f.carried_from === undefined ? {} : { carried_from: f.carried_from }),
  };
}

/** The free-tier answer (docs/api.md §2.4) a check of this endpoint gave. */
function freeAnswerOf(f: CrawlFacts) {
  return {
    verdict: f.verdict,
    reason: reasonText(f.reason),
    payment_terms_sha256: null,
    receipt_id: f.id,
    receipt_url: f.receipt_url,
    pay_to_changed: null,
    reason_code: f.reason,
    check_type: 'dry-run',
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
