/**
 * The daily bazaar check: the top N results of a discovery search, each checked like the crawl
 * (same prober, per-host limits, verdict rules and signed receipts), published as a `bazaar` run with
 * `bazaar.json`. Small and quick, so it is not resumable: a stopped check is simply run again.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildBazaar } from '../core/bazaar.ts';
import { planCrawl } from '../core/crawl-plan.ts';
import { parseSearchPage } from '../core/listing-pages.ts';
import { isOptedOut, type OptOutList } from '../core/opt-out.ts';
import { itemsNote, type SourceReport } from '../core/source-listing.ts';
import { writeFileDurably } from '../io/durable-file.ts';
import { acquireRunLock } from '../io/runs/lock.ts';
import { newRunId, publishRun, type RunPaths, type RunPointer } from '../io/runs/paths.ts';
import { type HostBudget, UNLIMITED_BUDGET } from './host-budget.ts';
import { type EndpointDeps, type ProbedEndpoint, probeOrPutOff } from './probe-endpoint.ts';
import { registrableDomain } from './registrable-domain.ts';
import { PER_DOMAIN, PER_HOST } from './run.ts';
import { runPerHost } from './scheduler.ts';
import type { FetchJson } from './sources/fetch-json.ts';

/** The public CDP discovery search (docs/x402.md §6.2). */
export const DEFAULT_SEARCH = 'https://api.cdp.coinbase.com/platform/v2/x402/discovery/search';

export type BazaarDeps = Omit<EndpointDeps, 'runId' | 'origin'> & {
  paths: RunPaths;
  fetchJson: FetchJson;
  monotonic: () => number;
  /** Hosts that asked not to be probed (`core/opt-out.ts`): their results are not checked. */
  optOut?: OptOutList;
  /** The day's per-host request budgets, shared with the crawl (`crawl/host-budget.ts`); unlimited by default. */
  openBudget?: (runId: string, listed: ReadonlyMap<string, number>) => Promise<HostBudget>;
};

export type BazaarOptions = { source: string; query: string; top: number };

/** Runs the check and publishes it; a failing search is published too, with its note and no results. */
export async function runBazaarCheck(
  deps: BazaarDeps,
  options: BazaarOptions,
): Promise<{ pointer: RunPointer; checked: number; report: SourceReport }> {
  const lock = await acquireRunLock(deps.paths.root, 'bazaar check');
  try {
    return await checkLocked(deps, options);
  } finally {
    await lock.release();
  }
}

async function checkLocked(
  deps: BazaarDeps,
  options: BazaarOptions,
): Promise<{ pointer: RunPointer; checked: number; report: SourceReport }> {
  const runId = newRunId(deps.now(), deps.random);
  const url = new URL(options.source);
  url.searchParams.set('query', options.query);
  url.searchParams.set('limit', String(options.top));
  url.searchParams.set('type', 'http');
  const fetched = await deps.fetchJson(url.href);
  const page = fetched.ok ? parseSearchPage(fetched.value, 'bazaar') : null;
  const listings = page?.ok ? page.listings : [];
  const report: SourceReport =
    page?.ok === true
      ? {
          ok: true,
          items: listings.length,
          note: itemsNote(listings.length, page.refused, page.firstRefusal),
          skipped: false,
        }
      : {
          ok: false,
          items: 0,
          note: fetched.ok ? (page as { message: string }).message : fetched.note,
          skipped: false,
        };
  const optOut = deps.optOut ?? new Set<string>();
  const plan = planCrawl(
    listings.filter((l) => !isOptedOut(new URL(l.urlNorm).host, optOut)),
    options.top,
  );

  const records = new Map<string, ProbedEndpoint>();
  const endpointDeps: EndpointDeps = { ...deps, runId, origin: 'bazaar' };
  const budget = deps.openBudget ? await deps.openBudget(runId, new Map()) : UNLIMITED_BUDGET;
  await runPerHost(
    plan.endpoints.map((endpoint) => ({ host: endpoint.host, item: endpoint })),
    async (endpoint, released) => {
      // A host whose daily budget is spent is not asked: its result is left out of the check.
      if (!budget.take(endpoint.host, 1)) return;
      const another = () => budget.take(endpoint.host, 1);
      const record = await probeOrPutOff(endpointDeps, endpoint, released, { another });
      if (record !== null) records.set(endpoint.urlNorm, record);
    },
    {
      perHost: PER_HOST,
      perDomain: PER_DOMAIN,
      domainOf: registrableDomain,
      concurrency: 32,
      now: deps.monotonic,
    },
  );
  await budget.flush();
  const ordered = plan.endpoints.flatMap((e) => records.get(e.urlNorm) ?? []);
  const checkedAt = deps.now();
  const dir = join(deps.paths.work, runId);
  await mkdir(join(dir, 'receipts'), { recursive: true });
  for (const record of ordered)
    await writeFile(join(dir, 'receipts', `${record.receipt.id}.json`), `${record.json}\n`);
  await writeFile(join(dir, 'receipts.ndjson'), ordered.map((r) => `${JSON.stringify(r.facts)}\n`).join(''));
  const bazaar = buildBazaar({
    runId,
    checkedAt,
    source: { url: options.source, query: options.query, top: options.top, report },
    facts: ordered.map((r) => r.facts),
  });
  await writeFileDurably(join(dir, 'bazaar.json'), `${JSON.stringify(bazaar, null, 2)}\n`);
  const run = {
    schema: 1,
    run_id: runId,
    kind: 'bazaar',
    options,
    sources: { bazaar: report },
    total_receipts: ordered.length,
  };
  await writeFileDurably(join(dir, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
  return { pointer: await publishRun(deps.paths, runId, checkedAt), checked: ordered.length, report };
}
