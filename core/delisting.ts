/**
 * Delisting (docs/data-files.md `delisted.json`): an endpoint of the previous published run that no source lists any
 * more is marked delisted, with the date, and offered to the watches as an event. Only what the run can know: every
 * source that listed it then was read whole this time (a failed source keeps its endpoints, `crawl/carried.ts`), its
 * host did not opt out, and the run was not cut by `--limit`. A delisting is kept for {@link DELISTED_KEEP_DAYS}
 * days, or until a source lists the endpoint again. Pure.
 */
import type { CrawlFacts } from './crawl-facts.ts';
import type { SourceReport } from './source-listing.ts';

/** How long a delisting stays shown. */
export const DELISTED_KEEP_DAYS = 90;

/** One delisted endpoint: what it was, where it was listed, the last run that probed it, and when it went. */
export type DelistedEntry = {
  event: 'delisted';
  url: string;
  url_norm: string;
  method: string;
  host: string;
  source_list: string;
  also_listed_in: string[];
  last_run_id: string;
  last_probed_at: string;
  last_verdict: string;
  /** The run that found it gone, and when that run finished. */
  delisted_in_run: string;
  delisted_at: string;
};

/** What the delistings of one run are computed from. */
export type DelistingInput = {
  runId: string;
  /** ISO time the run finished. */
  at: string;
  previous: { runId: string; lines: readonly unknown[]; delisted: readonly unknown[] } | null;
  sources: Record<string, SourceReport>;
  /** Normalized URLs this run planned (probed, put off or over budget): listed now. */
  listed: ReadonlySet<string>;
  /** Whether a host is opted out (its endpoints left the run, not the lists). */
  optedOut: (host: string) => boolean;
  /** The run was cut by `--limit`: what it did not plan may still be listed. */
  limited: boolean;
};

/**
 * This run's new delistings and every delisting still shown (new ones first, then by date, newest first).
 * @example delistings(input).fresh.length // endpoints gone since the previous run
 */
export function delistings(input: DelistingInput): { fresh: DelistedEntry[]; shown: DelistedEntry[] } {
  const fresh: DelistedEntry[] = [];
  const seen = new Set<string>();
  if (input.previous !== null && !input.limited) {
    for (const value of input.previous.lines) {
      const line = value as CrawlFacts | null;
      if (!isLine(line) || seen.has(line.url_norm) || input.listed.has(line.url_norm)) continue;
      const sources = [line.source_list, ...line.also_listed_in];
      if (!sources.every((source) => input.sources[source]?.ok === true)) continue;
      if (input.optedOut(line.host)) continue;
      seen.add(line.url_norm);
      fresh.push(entryOf(line, input, input.previous.runId));
    }
  }
  const oldest = Date.parse(input.at) - DELISTED_KEEP_DAYS * 86_400_000;
  const earlier = (input.previous?.delisted ?? []).filter(
    (value): value is DelistedEntry =>
      isEntry(value) &&
      !seen.has(value.url_norm) &&
      !input.listed.has(value.url_norm) &&
      Date.parse(value.delisted_at) >= oldest,
  );
  return { fresh, shown: [...fresh, ...earlier.sort((a, b) => cmp(b.delisted_at, a.delisted_at))] };
}

/** What the listings, `/v1/receipts/by-url` and the endpoint pages show of an endpoint's delisting. */
export type ShownDelisting = { delisted_at: string; delisted_in_run: string; source_list: string };

/**
 * The delistings a published run still shows (the `delisted` array of its `delisted.json`), by method and
 * normalized URL ({@link delistingKey}). Entries that are not delistings are skipped; for one endpoint the first
 * entry wins (the file lists the newest first). An endpoint listed again is not in the file any more, so it is
 * not here.
 */
export function shownDelistings(entries: readonly unknown[]): Map<string, ShownDelisting> {
  const shown = new Map<string, ShownDelisting>();
  for (const value of entries) {
    if (!isEntry(value) || typeof value.method !== 'string') continue;
    const key = delistingKey(value.url_norm, value.method);
    if (shown.has(key)) continue;
    shown.set(key, {
      delisted_at: value.delisted_at,
      delisted_in_run: typeof value.delisted_in_run === 'string' ? value.delisted_in_run : '',
      source_list: typeof value.source_list === 'string' ? value.source_list : '',
    });
  }
  return shown;
}

/** The key of {@link shownDelistings}: an endpoint's method and normalized URL. */
export function delistingKey(urlNorm: string, method: string): string {
  return `${method} ${urlNorm}`;
}

function entryOf(line: CrawlFacts, input: DelistingInput, previousRunId: string): DelistedEntry {
  return {
    event: 'delisted',
    url: line.url,
    url_norm: line.url_norm,
    method: line.method,
    host: line.host,
    source_list: line.source_list,
    also_listed_in: line.also_listed_in,
    last_run_id: line.carried_from ?? previousRunId,
    last_probed_at: line.probed_at,
    last_verdict: line.verdict,
    delisted_in_run: input.runId,
    delisted_at: input.at,
  };
}

function isLine(line: CrawlFacts | null): line is CrawlFacts {
  return (
    line !== null &&
    typeof line === 'object' &&
    typeof line.url_norm === 'string' &&
    typeof line.url === 'string' &&
    typeof line.host === 'string' &&
    typeof line.source_list === 'string' &&
    Array.isArray(line.also_listed_in) &&
    typeof line.probed_at === 'string'
  );
}

function isEntry(value: unknown): value is DelistedEntry {
  const e = value as DelistedEntry | null;
  return (
    e !== null &&
    typeof e === 'object' &&
    e.event === 'delisted' &&
    typeof e.url_norm === 'string' &&
    typeof e.delisted_at === 'string' &&
    Number.isFinite(Date.parse(e.delisted_at))
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
