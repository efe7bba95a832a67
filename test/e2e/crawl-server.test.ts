/**
 * The crawl and the running server together: a crawl of the sandbox lists runs while the
 * server holds the same DATA_DIR (no lock error), the server takes the published run in without a restart, serves
 * the listing routes, answers crawl receipts by id and by URL, and holds the live check to the crawled listing.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REASONS } from '../../core/reasons.ts';
import { parseCidrList } from '../../core/ssrf.ts';
import { runBazaarCheck } from '../../crawl/bazaar.ts';
import { runCrawl } from '../../crawl/run.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES } from '../../crawl/sources/fetch-json.ts';
import { readSource, sourceSpecOf } from '../../crawl/sources/read-source.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { createProber } from '../../io/probe/prober.ts';
import { runPaths } from '../../io/runs/paths.ts';
import { type DiscoveryServer, startDiscovery } from '../../sandbox/discovery.ts';
import { type SellerFleet, startSellers } from '../../sandbox/sellers/index.ts';
import { verifyReceipt } from '../../verify/verify.ts';
import { EXEMPT_SECRET, startTestService, type TestService } from '../helpers/service.ts';

const allow = parseCidrList('127.0.0.0/8');
let fleet: SellerFleet;
let discovery: DiscoveryServer;
let spot: TestService;

beforeAll(async () => {
  fleet = await startSellers();
  discovery = await startDiscovery({ sellers: fleet.urls, payTo: fleet.payTo });
  spot = await startTestService();
});
afterAll(async () => {
  await spot?.stop();
  await discovery?.close();
  await fleet?.close();
});

const get = (path: string) => fetch(`${spot.url}${path}`);

async function crawlDeps() {
  const { signer } = await loadSigningKeys({ dir: join(spot.dataDir, 'keys') });
  return {
    prober: createProber({ allow, timeoutMs: 5000 }),
    signer,
    now: () => new Date(),
    random: (n: number) => new Uint8Array(randomBytes(n)),
    baseUrl: spot.config.baseUrl,
    monotonic: () => performance.now(),
    fetchJson: fetchJsonVia(createProber({ allow, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 })),
  };
}

describe('a crawl taken in by the running server', () => {
  it('has no listing before the first crawl, but always the rules', async () => {
    const skips = await get('/v1/skips.json');
    expect(skips.status).toBe(404);
    expect(await skips.json()).toMatchObject({ error: { code: 'no_published_run' } });
    expect((await get('/saves.json')).status).toBe(404);
    expect(await (await get('/bazaar.json')).json()).toMatchObject({ error: { code: 'no_bazaar_check' } });
    const rules = await get('/rules.json');
    expect(rules.status).toBe(200);
    expect((await rules.json()).reasons.map((r: { code: string }) => r.code)).toEqual([...REASONS]);
  });

  it('serves the published run, its receipts by id and URL, and holds live checks to its listings', {
    timeout: 90_000,
  }, async () => {
    const deps = await crawlDeps();
    const paths = runPaths(spot.dataDir, 'crawl');
    const taken = new Set<string>();
    const specs = [discovery.cdpUrl, discovery.x402scanUrl].map((u) => sourceSpecOf(u, taken));
    const result = await runCrawl(
      {
        ...deps,
        paths,
        readSources: () => Promise.all(specs.map((s) => readSource(deps.fetchJson, s))),
        progressOut: { write: () => true },
        log: () => {},
      },
      // Shorter than server-error's Retry-After (30 s): its 503 is recorded as it came, not waited for.
      { resume: false, concurrency: null, limit: null, budgetMs: 20_000 },
    );
    await spot.service.takeInRuns();

    const page = await get('/v1/skips.json?page=1');
    expect(page.status).toBe(200);
    const served = await page.text();
    expect(served).toBe(await readFile(join(paths.root, result.pointer.path, 'skips', '1.json'), 'utf8'));
    expect((await get('/v1/skips.json')).status).toBe(200);
    expect(await (await get('/v1/skips.json?page=2')).json()).toMatchObject({
      error: { code: 'page_not_found' },
    });
    for (const bad of ['0', '-1', 'x', '1.5', '99999999'])
      expect(await (await get(`/v1/skips.json?page=${bad}`)).json()).toMatchObject({
        error: { code: 'bad_page' },
      });
    const saves = await (await get('/saves.json')).json();
    expect(saves.count).toBe(5);

    const skip = JSON.parse(served).skips.find((s: { url: string }) => s.url === fleet.urls['sdk-expensive']);
    const byId = await get(new URL(skip.permalink).pathname);
    expect(byId.status).toBe(200);
    const receipt = await byId.json();
    expect(receipt).toMatchObject({ origin: 'crawl', reason: 'price_mismatch' });
    expect(await verifyReceipt(receipt, await (await get('/.well-known/jwks.json')).json())).toMatchObject({
      ok: true,
    });
    const byUrl = await get(`/v1/receipts/by-url?url=${encodeURIComponent(fleet.urls['sdk-expensive'])}`);
    expect((await byUrl.json()).id).toBe(receipt.id);

    // The live check now holds the seller to the crawled listing ($0.01, the fleet wallet).
    const live = await fetch(
      `${spot.url}/v1/products/endpoint-spot-check?url=${encodeURIComponent(fleet.urls['sdk-expensive'])}`,
      {
        headers: { 'x-service-key': EXEMPT_SECRET },
      },
    );
    expect(await live.json()).toMatchObject({
      expected_source: 'listing',
      reason: 'price_mismatch',
      verdict: 'skip',
    });
  });

  it('serves the bazaar check', { timeout: 60_000 }, async () => {
    const deps = await crawlDeps();
    await runBazaarCheck(
      { ...deps, paths: runPaths(spot.dataDir, 'bazaar') },
      { source: discovery.searchUrl, query: 'v1', top: 2 },
    );
    const bazaar = await get('/bazaar.json');
    expect(bazaar.status).toBe(200);
    const body = await bazaar.json();
    expect(body).toMatchObject({ check_type: 'dry-run', source: { query: 'v1', top: 2 } });
    expect(body.results.map((r: { rank: number }) => r.rank)).toEqual([1, 2]);
  });
});
