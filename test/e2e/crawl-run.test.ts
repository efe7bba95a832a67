/**
 * A crawl of the sandbox's discovery lists, in process: the real prober (loopback allowed only through the
 * test's allow list, as PROBE_ALLOW_CIDRS), the seller fleet, signed receipts that verify offline, the published
 * files, and a run stopped by a failure and finished with `resume` without any URL being sent twice.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../core/ssrf.ts';
import { runBazaarCheck } from '../../crawl/bazaar.ts';
import { type CrawlDeps, runCrawl } from '../../crawl/run.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES } from '../../crawl/sources/fetch-json.ts';
import { readSource, sourceSpecOf } from '../../crawl/sources/read-source.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { createProber, type Prober } from '../../io/probe/prober.ts';
import { readPointer, runPaths } from '../../io/runs/paths.ts';
import { type DiscoveryServer, NEEDS_BODY_EXAMPLE, startDiscovery } from '../../sandbox/discovery.ts';
import { type SellerFleet, startSellers } from '../../sandbox/sellers/index.ts';
import { verifyReceipt } from '../../verify/verify.ts';

const allow = parseCidrList('127.0.0.0/8');
const BASE_URL = 'http://127.0.0.1:8402';
let fleet: SellerFleet;
let discovery: DiscoveryServer;
let dataDir: string;

beforeAll(async () => {
  fleet = await startSellers();
  discovery = await startDiscovery({ sellers: fleet.urls, payTo: fleet.payTo });
  dataDir = await mkdtemp(join(tmpdir(), 'sc-crawl-'));
});
afterAll(async () => {
  await discovery?.close();
  await fleet?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** A prober that counts what it sends per request (URL and body) and in flight per host, and can fail on a chosen
 *  probe. */
function countingProber(failOn: number | null) {
  // As `npm run crawl` builds it (crawl/cli-deps.ts): a host's connections kept for its next GET.
  const inner = createProber({ allow, timeoutMs: 5000, reuseConnections: true });
  const sent = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let maxInFlight = 0;
  let n = 0;
  const prober: Prober = {
    async probe(url, method, options) {
      n++;
      if (failOn !== null && n === failOn) throw new Error('simulated crash');
      const request = options?.body === undefined ? url : `${url} ${options.body}`;
      sent.set(request, (sent.get(request) ?? 0) + 1);
      const host = new URL(url).host;
      inFlight.set(host, (inFlight.get(host) ?? 0) + 1);
      maxInFlight = Math.max(maxInFlight, inFlight.get(host)!);
      try {
        return await inner.probe(url, method, options);
      } finally {
        inFlight.set(host, inFlight.get(host)! - 1);
      }
    },
  };
  return { prober, sent, maxInFlight: () => maxInFlight };
}

async function deps(prober: Prober, dir: string): Promise<CrawlDeps> {
  const { signer } = await loadSigningKeys({ dir: join(dir, 'keys') });
  const fetchJson = fetchJsonVia(createProber({ allow, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 }));
  const taken = new Set<string>();
  const specs = [discovery.cdpUrl, discovery.x402scanUrl, discovery.brokenUrl].map((u) =>
    sourceSpecOf(u, taken),
  );
  return {
    paths: runPaths(dir, 'crawl'),
    prober,
    signer,
    now: () => new Date(),
    random: (n) => new Uint8Array(randomBytes(n)),
    baseUrl: BASE_URL,
    readSources: () => Promise.all(specs.map((spec) => readSource(fetchJson, spec))),
    monotonic: () => performance.now(),
    progressOut: { write: () => true, isTTY: false },
    log: () => {},
  };
}

describe('npm run crawl (in process)', () => {
  it('crawls the sandbox lists, publishes the files, and signs receipts that verify', {
    timeout: 90_000,
  }, async () => {
    const counting = countingProber(null);
    // A run budget shorter than server-error's Retry-After (30 s): its 503 is recorded as it came, not waited for
    // (the retry itself: test/e2e/crawl-real-catalog.test.ts).
    const result = await runCrawl(await deps(counting.prober, dataDir), {
      resume: false,
      concurrency: 64,
      limit: null,
      budgetMs: 20_000,
    });
    expect(result.interrupted).toBe(0);
    expect(result.total).toBe(discovery.listed.length);
    expect(counting.maxInFlight()).toBeLessThanOrEqual(3);
    // One probe per URL; needs-params got its bare probe and one with the example query, needs-body its bare
    // POST (`{}`) and one with the listing's example JSON body.
    for (const [url, count] of counting.sent) expect({ url, count }).toEqual({ url, count: 1 });
    const needsBody = discovery.listed.find((l) => l.name === 'needs-body')!.url;
    expect([...counting.sent.keys()].filter((r) => r.startsWith(needsBody))).toEqual([
      needsBody,
      `${needsBody} ${JSON.stringify(NEEDS_BODY_EXAMPLE)}`,
    ]);

    const paths = runPaths(dataDir, 'crawl');
    const pointer = await readPointer(paths);
    expect(pointer?.run_id).toBe(result.pointer.run_id);
    const runDir = join(paths.root, pointer!.path);
    const read = async (name: string) => JSON.parse(await readFile(join(runDir, name), 'utf8'));
    const page = await read('skips/1.json');
    expect(page).toMatchObject({
      page: 1,
      pages: 1,
      endpoints_covered: discovery.listed.length,
      check_type: 'dry-run',
    });
    expect(page.sources).toMatchObject({
      [sourceSpecOf(discovery.cdpUrl, new Set()).name]: { ok: true },
    });
    expect(Object.values(page.sources as Record<string, { ok: boolean }>).filter((s) => !s.ok)).toHaveLength(
      1,
    );
    const byName = (name: string) =>
      page.skips.find((s: { url: string }) => s.url === fleet.urls[name as 'sdk-ok']);
    expect(byName('sdk-expensive')).toMatchObject({
      reason_code: 'price_mismatch',
      claimed_price_usd: 0.01,
      quoted_price_usd: 0.5,
    });
    expect(byName('pay-to-listing')).toMatchObject({
      reason_code: 'pay_to_mismatch',
      listed_pay_to: fleet.payTo,
    });
    expect(byName('sdk-ok')).toBeUndefined();

    const saves = await read('saves.json');
    // The three listings made to differ, and two sellers whose live terms differ from an honest listing anyway.
    const kinds = Object.fromEntries(saves.saves.map((s: { url: string; kind: string }) => [s.url, s.kind]));
    expect(kinds).toEqual({
      [fleet.urls['sdk-expensive']]: 'asked_more',
      [fleet.urls['pay-to-listing']]: 'other_wallet',
      [fleet.urls['v1-only']]: 'other_network',
      [fleet.urls['wrong-network']]: 'other_network',
      [fleet.urls['wallet-rotates']]: 'other_wallet',
    });
    const stats = await read('stats.json');
    expect(stats.runs).toHaveLength(1);
    expect(stats.runs[0]).toMatchObject({
      endpoints_covered: discovery.listed.length,
      new_this_week: discovery.listed.length,
    });

    const jwks = JSON.parse(await readFile(join(dataDir, 'keys', 'jwks.json'), 'utf8'));
    const files = await readdir(join(runDir, 'receipts'));
    expect(files).toHaveLength(discovery.listed.length);
    for (const file of files.slice(0, 5)) {
      const receipt = JSON.parse(await readFile(join(runDir, 'receipts', file), 'utf8'));
      expect(await verifyReceipt(receipt, jwks)).toMatchObject({ ok: true });
      expect(receipt).toMatchObject({ type: 'check', origin: 'crawl', check_type: 'dry-run' });
    }
    const index = (await readFile(join(runDir, 'receipts.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(index.find((f: { url: string }) => f.url.endsWith('/sellers/needs-params'))).toMatchObject({
      verdict: 'pay',
    });
    const bodyFacts = index.find((f: { url: string }) => f.url === needsBody);
    expect(bodyFacts).toMatchObject({ verdict: 'pay', reason: 'price_ok' });
    const bodyReceipt = JSON.parse(await readFile(join(runDir, 'receipts', `${bodyFacts.id}.json`), 'utf8'));
    expect(bodyReceipt).toMatchObject({ http_status: 402, example_body: NEEDS_BODY_EXAMPLE });
  });

  it('finishes a stopped run with --resume without sending any URL twice, then has nothing to resume', {
    timeout: 90_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sc-crawl-resume-'));
    try {
      const first = countingProber(6);
      await expect(
        runCrawl(await deps(first.prober, dir), {
          resume: false,
          concurrency: 4,
          limit: null,
          budgetMs: 20_000,
        }),
      ).rejects.toThrow('simulated crash');
      expect(await readPointer(runPaths(dir, 'crawl'))).toBeNull();
      const second = countingProber(null);
      const result = await runCrawl(await deps(second.prober, dir), {
        resume: true,
        concurrency: 4,
        limit: null,
        budgetMs: 20_000,
      });
      expect(result.interrupted).toBeGreaterThanOrEqual(1);
      for (const url of second.sent.keys()) expect(first.sent.has(url)).toBe(false);
      expect(first.sent.size + second.sent.size + result.interrupted).toBeGreaterThanOrEqual(result.total);
      expect((await readPointer(runPaths(dir, 'crawl')))?.run_id).toBe(result.pointer.run_id);
      await expect(
        runCrawl(await deps(second.prober, dir), {
          resume: true,
          concurrency: 4,
          limit: null,
          budgetMs: 20_000,
        }),
      ).rejects.toThrow(/no unfinished crawl run/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('npm run bazaar-check: the top results of a search, checked in order and published for /bazaar.json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sc-bazaar-'));
    try {
      const base = await deps(countingProber(null).prober, dir);
      const fetchJson = fetchJsonVia(
        createProber({ allow, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 }),
      );
      const paths = runPaths(dir, 'bazaar');
      const done = await runBazaarCheck(
        { ...base, paths, fetchJson },
        { source: discovery.searchUrl, query: 'sdk', top: 4 },
      );
      expect(done).toMatchObject({ checked: 4, report: { ok: true, items: 4 } });
      const pointer = await readPointer(paths);
      const bazaar = JSON.parse(await readFile(join(paths.root, pointer!.path, 'bazaar.json'), 'utf8'));
      expect(bazaar).toMatchObject({ date: new Date().toISOString().slice(0, 10), check_type: 'dry-run' });
      expect(bazaar.results.map((r: { rank: number; url: string }) => [r.rank, r.url])).toEqual(
        ['sdk-ok', 'sdk-post', 'sdk-base-sepolia', 'sdk-expensive'].map((name, i) => [
          i + 1,
          fleet.urls[name as 'sdk-ok'],
        ]),
      );
      expect(bazaar.results[3]).toMatchObject({ verdict: 'skip', reason_code: 'price_mismatch' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
