/**
 * Crawl of a loopback catalog shaped like the public ones (`_lib/catalog-fleet.ts`): 50,000 listings on 2,300 hosts,
 * one host holding 72 %, the rest heavy-tailed, with duplicates, POST-only, dead, slow, failing and rate-limiting
 * endpoints, read page by page from a CDP-shaped discovery list. Measures the probing's wall time against the
 * dominant host's bound (its distinct endpoints ÷ 3 × its latency), and the crawl process's peak RSS. The crawl runs
 * in a process of its own with the Node flags of `npm run crawl` (`_lib/crawl-process.ts`), the fleet in another.
 * No per-host daily budget is opened (every request is the bench's), and the run's time budget is the default:
 * the 429 sellers' one-second pauses are retried within it.
 * Knobs: BENCH_CATALOG_LISTINGS (50000), BENCH_CATALOG_HOSTS (2300), BENCH_CATALOG_DOMINANT_MS (the dominant host's
 * latency, 50).
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogFleet, CatalogStats } from './_lib/catalog-fleet.ts';
import { type CrawlMeasured, crawlNodeFlags } from './_lib/crawl-process.ts';
import { removeLater } from './_lib/processes.ts';
import { intEnv, type Result } from './_lib/result.ts';
import { ask, forkHelper } from './crawl.ts';

/** Runs the bench. */
export async function run(): Promise<Result> {
  const listings = intEnv('BENCH_CATALOG_LISTINGS', 50_000);
  const hosts = intEnv('BENCH_CATALOG_HOSTS', 2300);
  const dominantMs = intEnv('BENCH_CATALOG_DOMINANT_MS', 50);
  const dir = await mkdtemp(join(tmpdir(), 'sc-bench-catalog-'));
  const children: ReturnType<typeof forkHelper>[] = [];
  try {
    const fleetProcess = forkHelper('catalog-fleet.ts');
    children.push(fleetProcess);
    const fleet = await ask<CatalogFleet>(
      fleetProcess,
      { type: 'start', listings, hosts, dominantMs },
      'catalog',
    );
    const nodeFlags = await crawlNodeFlags(join(import.meta.dirname, '..'));
    const crawler = forkHelper('crawl-process.ts', nodeFlags);
    children.push(crawler);
    const load0 = loadavg()[0] ?? 0;
    const m = await ask<CrawlMeasured>(
      crawler,
      { type: 'crawl', listingsFile: '', sourceUrl: fleet.catalogUrl, dataDir: dir },
      'measured',
    );
    crawler.disconnect();
    const seen = await ask<CatalogStats>(fleetProcess, { type: 'stats' }, 'stats');
    const summary = JSON.parse(await readFile(join(m.runPath, 'summary.json'), 'utf8')) as {
      reasons: Record<string, number>;
    };
    const bound = fleet.dominant.boundMs;
    const ratio = m.probingMs / bound;
    const peakRssMiB = m.peakRssBytes / 2 ** 20;
    const load = loadavg()
      .map((n) => n.toFixed(2))
      .join(' ');
    console.log(
      `crawl-catalog: ${fleet.listings} listings (${fleet.unique} distinct) on ${fleet.hosts} hosts (${fleet.deadHosts} dead); dominant host ${fleet.dominant.unique} endpoints at ${fleet.dominant.latencyMs} ms, bound ${(bound / 1000).toFixed(2)} s (largest other host's ${(fleet.otherBoundMs / 1000).toFixed(2)} s); probing ${(m.probingMs / 1000).toFixed(2)} s (×${ratio.toFixed(3)}); whole run ${(m.totalMs / 1000).toFixed(2)} s; CPU ${(m.probingCpuUs / 1000 / m.total).toFixed(3)} ms per probe; peak RSS ${peakRssMiB.toFixed(0)} MiB; requests ${seen.requests} (dominant ${seen.dominantRequests}, its 3 slots idle ${seen.dominantIdlePct.toFixed(1)} % of its span); most in flight at one host ${seen.maxInFlight}; payment headers ${seen.paymentHeaders}; load ${load0.toFixed(2)} at the start, ${load} at the end`,
    );
    console.log(`kinds listed: ${JSON.stringify(fleet.kinds)}; reasons: ${JSON.stringify(summary.reasons)}`);
    return {
      bench: 'crawl-catalog',
      figures: [
        {
          name: 'probing wall time / dominant host bound',
          value: Number(ratio.toFixed(3)),
          unit: 'x',
          target: { max: 1.1 },
        },
        { name: 'probing wall time', value: Math.round(m.probingMs), unit: 'ms' },
        { name: 'dominant host bound', value: bound, unit: 'ms' },
        {
          name: "dominant host's slots idle between an answer and the next request (as the host sees it)",
          value: Number(seen.dominantIdlePct.toFixed(1)),
          unit: '%',
        },
        { name: 'largest other host bound (estimated)', value: fleet.otherBoundMs, unit: 'ms' },
        {
          name: 'whole run (source pages, probing, files, publication)',
          value: Math.round(m.totalMs),
          unit: 'ms',
        },
        {
          name: 'peak RSS of the crawl process (the fleet runs in its own)',
          value: Math.round(peakRssMiB),
          unit: 'MiB',
          target: { max: 400 },
        },
        {
          name: 'CPU of the crawl process per probe',
          value: Number((m.probingCpuUs / 1000 / m.total).toFixed(3)),
          unit: 'ms',
        },
        {
          name: 'most requests in flight at one host',
          value: seen.maxInFlight,
          unit: 'requests',
          target: { max: 3 },
        },
        {
          name: 'payment headers the fleet saw',
          value: seen.paymentHeaders,
          unit: 'headers',
          target: { max: 0 },
        },
      ],
      notes: [
        `${fleet.listings} listings, ${fleet.unique} distinct, on ${fleet.hosts} hosts (${fleet.deadHosts} dead); dominant ${fleet.dominant.unique} at ${fleet.dominant.latencyMs} ms; others 20-200 ms`,
        `kinds listed: ${JSON.stringify(fleet.kinds)}`,
        `reasons: ${JSON.stringify(summary.reasons)}`,
        `requests the fleet saw: ${seen.requests} (dominant host ${seen.dominantRequests}); connections ${seen.connections}`,
        `load average (1 min) at the start ${load0.toFixed(2)}; (1, 5, 15 min) at the end ${load}`,
      ],
    };
  } finally {
    for (const child of children) child.kill();
    removeLater(dir);
  }
}
