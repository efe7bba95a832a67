/**
 * Endpoints a failed source kept out of a run (docs/data-files.md "When a source fails"): an endpoint of the
 * previous published run that no source read this time listed, and that a source which failed this time did list,
 * keeps its last published receipt. The receipt file is linked into the new run (a published run folder stays
 * whole on its own), its index line is copied with `carried_from` naming the run that probed it and no observation
 * (the server took that in with the earlier run), and its listing stays exported as the expectation. Nothing is
 * probed for it: a failed source is no reason to believe the endpoint is gone, nor to ask it again.
 */
import { copyFile, link, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CrawlFacts } from '../core/crawl-facts.ts';
import type { SourceReport } from '../core/source-listing.ts';
import { normalizeUrl } from '../core/url.ts';
import { isRunId, publishedRunDir, type RunPaths } from '../io/runs/paths.ts';

/** What the previous published run gives the carry: its id, index lines, and its `listings.json` when asked. */
export type PreviousIndex = { runId: string; lines: readonly unknown[]; listings: () => Promise<unknown> };

/** The endpoints carried into a run: their index lines (receipt files linked) and their listing records. */
export type Carried = { lines: CrawlFacts[]; listings: unknown[] };

/**
 * Carries the endpoints of `previous` that only failed sources listed into the run folder `dir`. `planned` holds
 * the normalized URLs this run probes; a source failed when its report is neither `ok` nor `skipped`. `unasked`
 * holds planned URLs this run did not probe because their host's daily request budget was spent: they keep their
 * last receipt the same way.
 * @example const carried = await carryForward(paths, previous, sources, planned, workDir)
 */
export async function carryForward(
  paths: RunPaths,
  previous: PreviousIndex | null,
  sources: Record<string, SourceReport>,
  planned: ReadonlySet<string>,
  dir: string,
  unasked: ReadonlySet<string> = new Set(),
): Promise<Carried> {
  const failed = new Set(
    Object.entries(sources)
      .filter(([, report]) => !report.ok && !report.skipped)
      .map(([name]) => name),
  );
  if (previous === null || (failed.size === 0 && unasked.size === 0)) return { lines: [], listings: [] };
  const from = join(publishedRunDir(paths, previous.runId), 'receipts');
  const to = join(dir, 'receipts');
  await mkdir(to, { recursive: true });
  const lines: CrawlFacts[] = [];
  const urls = new Set<string>();
  for (const value of previous.lines) {
    const line = value as CrawlFacts | null;
    if (!isCarriable(line) || planned.has(line.url_norm) || urls.has(line.url_norm)) continue;
    const listedByFailed = [line.source_list, ...line.also_listed_in].some((source) => failed.has(source));
    if (!listedByFailed && !unasked.has(line.url_norm)) continue;
    // A line whose receipt file is gone is not carried: every line of a run has its file.
    if (!(await linkFile(join(from, `${line.id}.json`), join(to, `${line.id}.json`)))) continue;
    urls.add(line.url_norm);
    const carriedFrom = isRunId(line.carried_from) ? line.carried_from : previous.runId;
    lines.push({ ...line, observation: null, carried_from: carriedFrom });
  }
  if (lines.length === 0) return { lines, listings: [] };
  const records = await previous.listings();
  const listings = Array.isArray(records) ? records.filter((record) => urls.has(normalizedOf(record))) : [];
  return { lines, listings };
}

function isCarriable(line: CrawlFacts | null): line is CrawlFacts {
  return (
    line !== null &&
    typeof line === 'object' &&
    typeof line.id === 'string' &&
    /^sc-[a-z2-7]{26}$/.test(line.id) &&
    typeof line.url_norm === 'string' &&
    typeof line.source_list === 'string' &&
    Array.isArray(line.also_listed_in)
  );
}

/** The normalized URL of a listing record, or '' (never carried) when it has none. */
function normalizedOf(record: unknown): string {
  const url = (record as { url?: unknown } | null)?.url;
  if (typeof url !== 'string' || !URL.canParse(url)) return '';
  return normalizeUrl(url);
}

/** Links (published files never change), else copies; true when the file is there. A file already there stays. */
async function linkFile(source: string, target: string): Promise<boolean> {
  try {
    await link(source, target);
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EEXIST') return true;
    if (code === 'ENOENT') return false;
  }
  try {
    await copyFile(source, target);
    return true;
  } catch {
    return false;
  }
}
