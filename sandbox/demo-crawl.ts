/**
 * The crawl part of `npm run demo`: a crawl of the sandbox's discovery lists (CDP-shaped,
 * x402scan-shaped and a broken one) and a bazaar check, run in the demo's process against the running service's
 * DATA_DIR, then taken in by the service without a restart.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../api/config.ts';
import type { Service } from '../api/service.ts';
import { parseCidrList } from '../core/ssrf.ts';
import { runBazaarCheck } from '../crawl/bazaar.ts';
import { CRAWL_TIMEOUT_MS } from '../crawl/cli-deps.ts';
import { runCrawl } from '../crawl/run.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES, SOURCE_TIMEOUT_MS } from '../crawl/sources/fetch-json.ts';
import { readSource, type SourceSpec } from '../crawl/sources/read-source.ts';
import { dataPaths } from '../io/data-paths.ts';
import { loadSigningKeys } from '../io/keys.ts';
import { createProber } from '../io/probe/prober.ts';
import { runPaths } from '../io/runs/paths.ts';
import type { DiscoveryServer } from './discovery.ts';
import type { World } from './world.ts';

/** The discovery lists a sandbox crawl reads: what `crawlSandbox` needs of the world or of a test's own servers. */
export type SandboxLists = Pick<DiscoveryServer, 'cdpUrl' | 'x402scanUrl' | 'brokenUrl' | 'searchUrl'>;

/**
 * A real crawl of the sandbox's discovery lists (CDP-shaped, x402scan-shaped and a broken one) and a bazaar check
 * of the top 5 results for `sdk`, published under `dataDir` with the key there: the crawl's own code end to end,
 * with loopback let through the SSRF gate by `allowCidrs` (the demo's and the tests' PROBE_ALLOW_CIDRS).
 */
export async function crawlSandbox(lists: SandboxLists, options: SandboxCrawlOptions) {
  const allow = parseCidrList(options.allowCidrs);
  const { signer } = await loadSigningKeys({ dir: dataPaths(options.dataDir).keys });
  const fetchJson = fetchJsonVia(
    createProber({ allow, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: SOURCE_TIMEOUT_MS }),
  );
  const common = {
    prober: createProber({ allow, timeoutMs: CRAWL_TIMEOUT_MS }),
    signer,
    now: () => new Date(),
    random: (n: number) => new Uint8Array(randomBytes(n)),
    baseUrl: options.baseUrl,
    monotonic: () => performance.now(),
  };
  const specs: SourceSpec[] = [
    { name: 'sandbox-cdp', kind: 'discovery', location: lists.cdpUrl },
    { name: 'sandbox-x402scan', kind: 'x402scan', location: lists.x402scanUrl },
    { name: 'sandbox-broken', kind: 'discovery', location: lists.brokenUrl },
  ];
  const crawl = await runCrawl(
    {
      ...common,
      paths: runPaths(options.dataDir, 'crawl'),
      readSources: () => Promise.all(specs.map((spec) => readSource(fetchJson, spec))),
      progressOut: { write: () => true },
      log: () => {},
    },
    // The demo's crawl has 15 s: server-error's Retry-After (30 s) does not fit, so its 503 is recorded as it came
    // instead of holding the demo a minute (the pause itself: test/e2e/crawl-real-catalog.test.ts).
    { resume: false, concurrency: null, limit: null, budgetMs: 15_000 },
  );
  const bazaar = await runBazaarCheck(
    { ...common, paths: runPaths(options.dataDir, 'bazaar'), fetchJson },
    { source: lists.searchUrl, query: 'sdk', top: 5 },
  );
  return { crawl, bazaar, kid: signer.kid };
}

export type SandboxCrawlOptions = { dataDir: string; baseUrl: string; allowCidrs: string };

/** Runs the crawl and the bazaar check; returns the lines to print and the links to open. */
export async function crawlTour(world: World, config: Config, service: Service, url: string) {
  const { crawl, bazaar } = await crawlSandbox(world.discovery, {
    dataDir: config.dataDir,
    baseUrl: config.baseUrl,
    allowCidrs: config.probeAllowCidrs,
  });
  await service.takeInRuns();
  const page = (await (await fetch(`${url}/v1/skips.json`)).json()) as Record<string, unknown>;
  const saves = (await (await fetch(`${url}/saves.json`)).json()) as { count: number };
  const sources = page['sources'] as Record<string, { ok: boolean; items: number }>;
  return {
    lines: [
      `      crawl run ${crawl.pointer.run_id}: ${crawl.total} endpoints; pay ${page['pay']}, skip ${page['skip']}, recheck ${page['recheck']}`,
      `      sources: ${Object.entries(sources)
        .map(([name, s]) => `${name} ${s.ok ? 'ok' : 'failed'} (${s.items})`)
        .join(', ')}`,
      `      ${saves.count} saves: live 402s that asked more, paid another wallet or used another network than listed`,
      `      bazaar check ${bazaar.pointer.run_id}: top ${bazaar.checked} results of a search for "sdk"`,
      '      the server took the run in without a restart: its receipts answer by id and by URL',
    ],
    links: [
      ['skip listing', `${url}/v1/skips.json?page=1`],
      ['saves', `${url}/saves.json`],
      ['bazaar check', `${url}/bazaar.json`],
      ['rules', `${url}/rules.json`],
    ] as Array<[string, string]>,
  };
}
