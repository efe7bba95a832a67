/**
 * A crawl of a loopback catalog of the public lists' shape (`sandbox/real-catalog.ts`), in process through the real
 * SSRF-gated prober (loopback allowed only through the test's allow list): every listing's price, network and wallet
 * as the catalog wrote them, metadata and listing notes kept, why each listing never reached its paywall in the
 * index, the skip records and the receipts, a 429 with Retry-After paused and asked again in the same run, the
 * header judged over the body, a named User-Agent, an opted-out host left alone, Circle's list read by its offset,
 * the per-host daily budget shared across runs; then listings removed and a second crawl that marks them delisted.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../core/ssrf.ts';
import { openHostBudget } from '../../crawl/host-budget.ts';
import { type CrawlDeps, runCrawl } from '../../crawl/run.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES } from '../../crawl/sources/fetch-json.ts';
import { readSource, sourceSpecOf } from '../../crawl/sources/read-source.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { createProber } from '../../io/probe/prober.ts';
import { spotcheckUserAgent } from '../../io/probe/user-agent.ts';
import { readPointer, runPaths } from '../../io/runs/paths.ts';
import { type RealCatalog, startRealCatalog } from '../../sandbox/real-catalog.ts';

const allow = parseCidrList('127.0.0.0/8');
const BASE_URL = 'http://127.0.0.1:8402';
let catalog: RealCatalog;
let dataDir: string;

beforeAll(async () => {
  catalog = await startRealCatalog();
  dataDir = await mkdtemp(join(tmpdir(), 'sc-real-catalog-'));
});
afterAll(async () => {
  await catalog?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function deps(optOut: Set<string>): Promise<CrawlDeps> {
  const { signer } = await loadSigningKeys({ dir: join(dataDir, 'keys') });
  const userAgent = spotcheckUserAgent(BASE_URL);
  const prober = createProber({ allow, userAgent, timeoutMs: 5000, reuseConnections: true });
  const fetchJson = fetchJsonVia(
    createProber({ allow, userAgent, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 }),
  );
  const taken = new Set<string>();
  const specs = [
    sourceSpecOf(`discovery:${catalog.cdpUrl}`, taken),
    { ...sourceSpecOf(`circle:${catalog.circleUrl}`, taken), name: 'circle' },
  ];
  return {
    paths: runPaths(dataDir, 'crawl'),
    prober,
    signer,
    now: () => new Date(),
    random: (n) => new Uint8Array(randomBytes(n)),
    baseUrl: BASE_URL,
    readSources: () => Promise.all(specs.map((spec) => readSource(fetchJson, spec))),
    monotonic: () => performance.now(),
    progressOut: { write: () => true, isTTY: false },
    log: () => {},
    optOut,
    openBudget: (runId, listed) =>
      openHostBudget({ dir: join(dataDir, 'requests'), who: runId, now: new Date(), listed }),
  };
}

async function published(name: string) {
  const paths = runPaths(dataDir, 'crawl');
  const pointer = await readPointer(paths);
  return JSON.parse(await readFile(join(paths.root, pointer!.path, name), 'utf8'));
}

async function indexLines(): Promise<Array<Record<string, unknown>>> {
  const paths = runPaths(dataDir, 'crawl');
  const pointer = await readPointer(paths);
  const text = await readFile(join(paths.root, pointer!.path, 'receipts.ndjson'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line));
}

describe('a crawl of a catalog of the public shape', () => {
  it('reads every listing right, says why each never reached its paywall, and honours Retry-After', {
    timeout: 90_000,
  }, async () => {
    const optedOut = catalog.small[2] as string;
    const result = await runCrawl(await deps(new Set([optedOut])), {
      resume: false,
      concurrency: 32,
      limit: null,
    });
    const expected = catalog.entries.filter((e) => new URL(e.url).host !== optedOut);
    expect(result).toMatchObject({ interrupted: 0, total: expected.length });

    // Named, with the rules page; the opted-out host got no request at all.
    expect([...catalog.userAgents]).toEqual([spotcheckUserAgent(BASE_URL)]);
    expect([...catalog.hits.keys()].filter((url) => new URL(url).host === optedOut)).toEqual([]);
    const run = await published('run.json');
    expect(run.opted_out).toEqual({
      hosts: 1,
      endpoints: catalog.entries.length - expected.length,
    });
    expect(run.sources.circle).toMatchObject({ ok: true, items: 4 });

    // Every listing's price, network and wallet as the catalog wrote them; notes and metadata kept.
    const listings: Array<Record<string, unknown>> = await published('listings.json');
    for (const entry of expected) {
      const record = listings.find((l) => l['url'] === entry.url);
      const option = entry.options[0]!;
      expect(record, entry.url).toMatchObject({ pay_to: option.payTo });
      if (entry.serviceName !== undefined) expect(record?.['service_name']).toBe(entry.serviceName);
    }
    const form = (label: string) => listings.find((l) => l['service_name'] === label);
    expect(form('Base by its v1 name, priced by maxAmountRequired')).toMatchObject({
      price_usd: 0.01,
      network: 'eip155:8453',
    });
    expect(form('Polygon')).toMatchObject({ price_usd: 0.01, network: 'eip155:137' });
    expect(form('aws:base')).toMatchObject({
      price_usd: null,
      network: 'aws:base',
      listing_note: 'network_unsupported',
    });
    expect(form('Base in another token')).toMatchObject({ price_usd: null, listing_note: 'asset_not_usdc' });
    const pay0 = listings.find((l) => String(l['url']).endsWith('/pay/0'));
    expect(pay0).toMatchObject({
      price_usd: 0.01,
      network: 'eip155:8453',
      tags: ['sandbox', 'even'],
      description: 'Paid resource 0 of the dominant host.',
      last_updated: '2026-03-01T12:00:00.000Z',
    });

    // Why each listing never reached its paywall: the index line, the skip record and the receipt say the same.
    const lines = await indexLines();
    const page = await published('skips/1.json');
    for (const entry of expected) {
      const line = lines.find((l) => l['url'] === entry.url);
      expect({ url: entry.url, state: line?.['probe_state'] ?? null }).toEqual({
        url: entry.url,
        state: entry.expectState,
      });
      const paths = runPaths(dataDir, 'crawl');
      const pointer = await readPointer(paths);
      const receipt = JSON.parse(
        await readFile(join(paths.root, pointer!.path, 'receipts', `${line?.['id']}.json`), 'utf8'),
      );
      expect(receipt.quality.probe_state ?? null).toBe(entry.expectState);
      const skip = page.skips.find((r: { url: string }) => r.url === entry.url);
      if (skip !== undefined) expect(skip.probe_state ?? null).toBe(entry.expectState);
    }
    const rules = await published('rules.json');
    const states = rules.probe_states.map((p: { code: string }) => p.code);
    for (const entry of expected) if (entry.expectState !== null) expect(states).toContain(entry.expectState);

    // The 429 paused its host and was asked again in the same run: it pays, after exactly two requests.
    const limited = expected.find((e) => e.url.endsWith('/limited'))!.url;
    expect(catalog.hits.get(limited)).toBe(2);
    expect(lines.find((l) => l['url'] === limited)).toMatchObject({ verdict: 'pay', reason: 'price_ok' });
    // The header's terms are judged, not the body's other wallet.
    const both = expected.find((e) => e.url.endsWith('/header-and-body'))!.url;
    expect(lines.find((l) => l['url'] === both)).toMatchObject({
      verdict: 'pay',
      pay_to: expect.stringMatching(/^0xf1ee/i),
    });

    // The run's requests count against each host's daily budget, in a file of the day.
    const day = new Date().toISOString().slice(0, 10);
    const files = await readdir(join(dataDir, 'requests', day));
    expect(files).toEqual([`${result.pointer.run_id}.json`]);
    const counts = JSON.parse(await readFile(join(dataDir, 'requests', day, files[0]!), 'utf8')).counts;
    expect(counts[catalog.dominant]).toBeGreaterThanOrEqual(
      expected.filter((e) => e.url.includes(catalog.dominant)).length + 1,
    );
  });

  it('marks the listings no source lists any more as delisted, with the date, on the next run', {
    timeout: 90_000,
  }, async () => {
    const gone = catalog.entries.filter((e) => /\/pay\/(1|4)$/.test(e.url)).map((e) => e.url);
    catalog.remove(gone);
    const before = Date.now();
    await runCrawl(await deps(new Set([catalog.small[2] as string])), {
      resume: false,
      concurrency: 32,
      limit: null,
    });
    const delisted = await published('delisted.json');
    expect(delisted).toMatchObject({ schema: 1, new: 2, count: 2 });
    expect(delisted.delisted.map((d: { url: string }) => d.url).sort()).toEqual([...gone].sort());
    for (const entry of delisted.delisted) {
      expect(entry).toMatchObject({ event: 'delisted', method: 'GET', last_verdict: 'pay' });
      expect(Date.parse(entry.delisted_at)).toBeGreaterThanOrEqual(before - 1000);
    }
    expect((await published('summary.json')).delisted).toBe(2);
    expect((await published('skips/1.json')).delisted).toBe(2);
    // Delisted endpoints are not exported as expectations any more.
    const listings: Array<{ url: string }> = await published('listings.json');
    expect(listings.filter((l) => gone.includes(l.url))).toEqual([]);
  });
});
