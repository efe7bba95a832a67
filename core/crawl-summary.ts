/**
 * Crawl summary statistics (docs/api.md §2.10; docs/data-files.md `summary.json`, `stats.json`): one summary per run,
 * kept across runs for charts.
 */
import type { CrawlFacts } from './crawl-facts.ts';
import { REASONS, type Reason } from './reasons.ts';
import type { SourceReport } from './source-listing.ts';

/** One run's statistics. */
export type RunSummary = {
  run_id: string;
  started_at: string;
  crawled_at: string;
  duration_s: number;
  endpoints_covered: number;
  new_this_week: number;
  previous_run: string | null;
  total_receipts: number;
  pay: number;
  skip: number;
  recheck: number;
  reasons: Record<Reason, number>;
  sources: Record<string, SourceReport>;
  lists: Record<string, number>;
  listed_in: Record<string, number>;
  hosts: number;
  saves: number;
  /** Endpoints whose probe was sent but not recorded before a crash; never probed twice (docs/decisions.md). */
  interrupted: number;
  /**
   * Endpoints not probed by this run but kept with their last published receipt, because only sources that failed
   * in this run listed them (docs/data-files.md "When a source fails"); not counted in any other member.
   */
  carried: number;
  /** Endpoints of the previous run that no source lists any more (`core/delisting.ts`, `delisted.json`). */
  delisted: number;
};

/** What a summary is computed from besides the probes. */
export type SummaryInput = {
  runId: string;
  startedAt: string;
  crawledAt: string;
  durationS: number;
  /** Every probe of the run (iterated once). */
  facts: Iterable<CrawlFacts>;
  /** The previous published crawl and the normalized URLs it probed; null for the first run. */
  previous: { runId: string; urls: ReadonlySet<string> } | null;
  sources: Record<string, SourceReport>;
  lists: Record<string, number>;
  listedIn: Record<string, number>;
  saves: number;
  interrupted: number;
  /** Endpoints carried from an earlier run (default 0). */
  carried?: number;
  /** Endpoints delisted since the previous run (default 0). */
  delisted?: number;
};

/**
 * Summarizes a run.
 * @example summarizeRun(input).endpoints_covered // distinct normalized URLs probed
 */
export function summarizeRun(input: SummaryInput): RunSummary {
  const reasons = Object.fromEntries(REASONS.map((r) => [r, 0])) as Record<Reason, number>;
  const verdicts = { pay: 0, skip: 0, recheck: 0 };
  const urls = new Set<string>();
  const hosts = new Set<string>();
  let total = 0;
  for (const fact of input.facts) {
    total++;
    reasons[fact.reason]++;
    verdicts[fact.verdict]++;
    urls.add(fact.url_norm);
    hosts.add(fact.host);
  }
  const previous = input.previous;
  let fresh = 0;
  for (const url of urls) if (previous === null || !previous.urls.has(url)) fresh++;
  return {
    run_id: input.runId,
    started_at: input.startedAt,
    crawled_at: input.crawledAt,
    duration_s: Math.round(input.durationS * 1000) / 1000,
    endpoints_covered: urls.size,
    new_this_week: fresh,
    previous_run: previous?.runId ?? null,
    total_receipts: total,
    ...verdicts,
    reasons,
    sources: input.sources,
    lists: input.lists,
    listed_in: input.listedIn,
    hosts: hosts.size,
    saves: input.saves,
    interrupted: input.interrupted,
    carried: input.carried ?? 0,
    delisted: input.delisted ?? 0,
  };
}
