/**
 * A failed crawl never blanks the public listings (docs/data-files.md "When a source fails"): a run that read no
 * source successfully publishes nothing and `npm run crawl` exits non-zero; a failed source is marked in the run's
 * `sources` (`ok: false`, a note), and the endpoints only it listed keep their last published receipts, carried into
 * the new run and marked as carried (`carried_from`), never counted as probed by it. The crawl's own code throughout;
 * the prober is a fake at its injected seam (no socket), answering each URL from a table.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { parseSourceListing, type SourceListing } from '../../../core/source-listing.ts';
import { NoSourceReadError, runCrawl } from '../../../crawl/run.ts';
import { failedSource, type SourceRead } from '../../../crawl/sources/_result.ts';
import { loadSigningKeys } from '../../../io/keys.ts';
import { ingestRun } from '../../../io/runs/ingest.ts';
import { readPointer, runPaths } from '../../../io/runs/paths.ts';
import { createMemoryStore } from '../../../io/store/memory.ts';
import { buildAccept, buildV2Header } from '../../fixtures/challenge.ts';
import { writeCrawlFixture } from '../../fixtures/crawl-run.ts';
import { runCli } from '../../helpers/cli.ts';

const URLS = {
  a1: 'https://alpha-seller.example/a1',
  a2: 'https://alpha-seller.example/a2',
  ab: 'https://shared-seller.example/ab',
  b1: 'https://beta-seller.example/b1',
  b2: 'https://beta-seller.example/b2',
};

/** `/a2` and `/b2` answer 200 (skip `no_paywall`), the rest an honest 402. */
function outcomeOf(url: string): ProbeOutcome {
  const base = { probedAt: new Date().toISOString(), elapsedMs: 3 };
  const free = url.endsWith('2');
  return {
    kind: 'response',
    ...base,
    response: {
      status: free ? 200 : 402,
      headers: free ? {} : { 'payment-required': buildV2Header({ accepts: [buildAccept()] }) },
      body: '{}',
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: url,
      redirects: 0,
    },
  };
}

function listed(name: string, urls: string[]): SourceRead {
  const listings: SourceListing[] = urls.flatMap((url) => {
    const made = parseSourceListing({
      url,
      method: 'GET',
      option: null,
      priceUsd: 0.01,
      source: name,
      example: null,
    });
    return made.ok ? [made.listing] : [];
  });
  return {
    name,
    listings,
    report: { ok: true, items: listings.length, note: `${listings.length} items`, skipped: false },
  };
}

let dir: string;
const probed: string[] = [];
let sources: () => SourceRead[] = () => [];

async function crawl() {
  const { signer } = await loadSigningKeys({ dir: join(dir, 'keys') });
  return runCrawl(
    {
      paths: runPaths(dir, 'crawl'),
      prober: {
        probe: async (url) => {
          probed.push(url);
          return outcomeOf(url);
        },
      },
      signer,
      now: () => new Date(),
      random: (n) => new Uint8Array(randomBytes(n)),
      baseUrl: 'http://127.0.0.1:8402',
      readSources: async () => sources(),
      monotonic: () => performance.now(),
      progressOut: { write: () => true, isTTY: false },
      log: () => {},
    },
    { resume: false, concurrency: 4, limit: null },
  );
}

type Line = { id: string; url: string; carried_from?: string; observation: unknown; source_list: string };

async function published() {
  const paths = runPaths(dir, 'crawl');
  const pointer = await readPointer(paths);
  const runDir = join(paths.root, pointer!.path);
  const read = async (name: string) => JSON.parse(await readFile(join(runDir, name), 'utf8'));
  const index: Line[] = (await readFile(join(runDir, 'receipts.ndjson'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const byUrl = new Map(index.map((line) => [line.url, line]));
  return { pointer: pointer!, runDir, read, index, byUrl };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-crawl-failed-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a crawl whose sources fail', () => {
  let first: Awaited<ReturnType<typeof published>>;

  it('first: both sources read, five endpoints published', async () => {
    sources = () => [
      listed('alpha', [URLS.a1, URLS.a2, URLS.ab]),
      listed('beta', [URLS.b1, URLS.b2, URLS.ab]),
    ];
    await crawl();
    first = await published();
    expect(first.index.map((l) => l.url).sort()).toEqual(Object.values(URLS).sort());
  });

  it('keeps the receipts of the endpoints only a failed source listed, marked as carried', async () => {
    sources = () => [
      listed('alpha', [URLS.a1, URLS.a2, URLS.ab]),
      failedSource('beta', 'unreachable (dns_no_address)'),
    ];
    probed.length = 0;
    const result = await crawl();
    expect(result.total).toBe(3);
    expect(probed.sort()).toEqual([URLS.a1, URLS.a2, URLS.ab].sort());
    const second = await published();
    expect(second.pointer.run_id).not.toBe(first.pointer.run_id);

    // The run's sources say what failed.
    const run = await second.read('run.json');
    expect(run.sources.beta).toEqual({
      ok: false,
      items: 0,
      note: 'unreachable (dns_no_address)',
      skipped: false,
    });
    expect(run).toMatchObject({ total_receipts: 3, carried: 2 });

    // B1 and B2 keep their receipts of the first run, byte for byte, marked as carried; the server adds no second
    // observation for them (it took the first run's in already).
    for (const url of [URLS.b1, URLS.b2]) {
      const line = second.byUrl.get(url)!;
      const before = first.byUrl.get(url)!;
      expect(line).toMatchObject({ id: before.id, carried_from: first.pointer.run_id, observation: null });
      expect(await readFile(join(second.runDir, 'receipts', `${line.id}.json`), 'utf8')).toBe(
        await readFile(join(first.runDir, 'receipts', `${line.id}.json`), 'utf8'),
      );
    }
    for (const url of [URLS.a1, URLS.a2, URLS.ab]) {
      expect(second.byUrl.get(url)!.carried_from).toBeUndefined();
      expect(second.byUrl.get(url)!.id).not.toBe(first.byUrl.get(url)!.id);
    }
    expect(second.index).toHaveLength(5);
    expect(await readdir(join(second.runDir, 'receipts'))).toHaveLength(5);

    // The listing shows the carried skip as carried; the counts are this run's probes.
    const page = await second.read('skips/1.json');
    expect(page).toMatchObject({ endpoints_covered: 3, total_receipts: 3, carried: 2, new_this_week: 0 });
    const skips = page.skips as Array<{ url: string; carried_from?: string }>;
    expect(skips.find((s) => s.url === URLS.b2)).toMatchObject({ carried_from: first.pointer.run_id });
    expect(skips.find((s) => s.url === URLS.a2)?.carried_from).toBeUndefined();
    expect(await second.read('summary.json')).toMatchObject({ carried: 2, endpoints_covered: 3 });

    // The expectations of the carried endpoints stay exported for the live check.
    const listings = (await second.read('listings.json')) as Array<{ url: string; source: string }>;
    expect(
      listings
        .filter((l) => l.source === 'beta')
        .map((l) => l.url)
        .sort(),
    ).toEqual([URLS.b1, URLS.b2]);

    // The server taking both runs in in turn holds one observation of B1, not two.
    const store = createMemoryStore();
    const paths = runPaths(dir, 'crawl');
    await ingestRun(store, paths, first.pointer.run_id);
    await ingestRun(store, paths, second.pointer.run_id);
    expect(await store.observations('https://beta-seller.example/b1', 'GET')).toHaveLength(1);
  });

  it('carries them again while the source keeps failing, still naming the run that probed them', async () => {
    await crawl();
    const third = await published();
    expect(third.byUrl.get(URLS.b2)).toMatchObject({
      id: first.byUrl.get(URLS.b2)!.id,
      carried_from: first.pointer.run_id,
    });
    expect(existsSync(join(third.runDir, 'receipts', `${first.byUrl.get(URLS.b2)!.id}.json`))).toBe(true);
  });

  it('publishes nothing when no source was read, and leaves current.json on the last good run', async () => {
    const paths = runPaths(dir, 'crawl');
    const before = await readPointer(paths);
    const workBefore = await readdir(paths.work);
    const runsBefore = await readdir(paths.runs);
    sources = () => [
      failedSource('alpha', 'refused by the SSRF gate (loopback)'),
      failedSource('beta', 'timed out'),
    ];
    probed.length = 0;
    await expect(crawl()).rejects.toBeInstanceOf(NoSourceReadError);
    await expect(crawl()).rejects.toThrow(
      /no listing source could be read.*alpha: refused by the SSRF gate/s,
    );
    expect(probed).toEqual([]);
    expect(await readPointer(paths)).toEqual(before);
    expect(await readdir(paths.work)).toEqual(workBefore);
    expect(await readdir(paths.runs)).toEqual(runsBefore);
  });

  it('lets an endpoint go once its source is read again and no longer lists it', async () => {
    sources = () => [listed('alpha', [URLS.a1, URLS.a2, URLS.ab]), listed('beta', [URLS.b1])];
    await crawl();
    const fifth = await published();
    expect(fifth.byUrl.has(URLS.b2)).toBe(false);
    expect(fifth.byUrl.get(URLS.b1)?.carried_from).toBeUndefined();
    expect(fifth.index.filter((l) => l.carried_from !== undefined)).toEqual([]);
  });
});

describe('npm run crawl with every source down', () => {
  it('exits non-zero, says why, and publishes nothing', { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sc-crawl-down-'));
    try {
      await writeCrawlFixture({
        dataDir,
        baseUrl: 'http://127.0.0.1:8402',
        finishedAt: new Date(),
        endpoints: 5,
      });
      const paths = runPaths(dataDir, 'crawl');
      const before = await readPointer(paths);
      // Loopback without PROBE_ALLOW_CIDRS: the SSRF gate refuses the source, as it would a private address.
      const run = await runCli(
        '../crawl/main.ts',
        ['--source', 'http://127.0.0.1:9/discovery/resources', '--source', 'file:/nonexistent/listings.json'],
        dataDir,
        { BASE_URL: 'http://127.0.0.1:8402' },
      );
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/no listing source could be read/);
      expect(run.stderr).toMatch(/refused by the SSRF gate/);
      expect(run.stdout).not.toMatch(/published run/);
      expect(await readPointer(paths)).toEqual(before);
      expect(existsSync(paths.work) ? await readdir(paths.work) : []).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
