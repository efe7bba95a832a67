/**
 * Delisting shown (docs/decisions.md "Delisting shown"): a listing removed between two crawl runs is shown as
 * delisted, with the date the second run finished, by `GET /v1/receipts/by-url` (the `x-delisted-at` header; the
 * body stays the signed receipt) and on its endpoint page and JSON twin as the site build writes them; a third run
 * that lists it again clears it. The runs are written by the crawl's own code (`test/fixtures/crawl-run.ts`).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointKey } from '../../../core/endpoint-paths.ts';
import { readSiteHistory } from '../../../site/lib/endpoint-history.ts';
import { writeEndpointPages } from '../../../site/lib/endpoint-pages.ts';
import { publishedRun } from '../../../site/lib/published.ts';
import { verifyReceipt } from '../../../verify/verify.ts';
import { writeCrawlFixture } from '../../fixtures/crawl-run.ts';
import { appFetch, startTestService } from '../../helpers/service.ts';

const BASE_URL = 'https://spotcheck.test';
const SHELL = ['<title>', 'title', '</title><meta content="', 'description', '"><main>', 'body', '</main>'];
const RUN_2_FINISHED = new Date(Date.UTC(2026, 5, 8, 12));

let dir: string;
/** A `pay` endpoint of run 1 that run 2 no longer lists, and one that both list. */
let gone: { url: string; urlNorm: string; method: string };
let kept: { url: string; method: string };

const run = (endpoints: number, finishedAt: Date, seed: number) =>
  writeCrawlFixture({ dataDir: dir, baseUrl: BASE_URL, endpoints, finishedAt, seed });

/** Starts the service over the runs (it takes the published one in), asks by-url if asked, and stops it. */
async function byUrl(url?: string, method?: string): Promise<Response | null> {
  const service = await startTestService({ BASE_URL }, {}, { dataDir: dir, listen: false });
  try {
    await service.service.takeInRuns();
    if (url === undefined || method === undefined) return null;
    const query = new URLSearchParams({ url, method });
    return await appFetch(service.service, `/v1/receipts/by-url?${query}`);
  } finally {
    await service.stop({ keepData: true });
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-delisted-'));
  const first = await run(30, new Date(Date.UTC(2026, 5, 1, 12)), 1);
  // The server took run 1 in before run 2 was published, as a running server does.
  await byUrl();
  await run(24, RUN_2_FINISHED, 2);
  const listed = (i: number) => first.facts.find((f) => f.url.includes(`/item-${i}`));
  const candidate = [24, 25, 26, 27, 28, 29].map(listed).find((f) => f?.verdict === 'pay');
  const stays = listed(1);
  if (!candidate || !stays) throw new Error('fixture: no pay endpoint among those delisted');
  gone = { url: candidate.url, urlNorm: candidate.url_norm, method: candidate.method };
  kept = { url: stays.url, method: stays.method };
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a listing removed between two crawl runs', () => {
  it('is shown delisted by by-url, with the date, and its receipt still verifies', async () => {
    const answer = await byUrl(gone.url, gone.method);
    expect(answer?.status).toBe(200);
    expect(answer?.headers.get('x-delisted-at')).toBe(RUN_2_FINISHED.toISOString());
    const receipt = (await answer?.json()) as Record<string, unknown>;
    expect(receipt).not.toHaveProperty('delisted');
    const jwks = JSON.parse(await readFile(join(dir, 'keys', 'jwks.json'), 'utf8'));
    expect((await verifyReceipt(receipt, jwks)).ok).toBe(true);
    const listedOne = await byUrl(kept.url, kept.method);
    expect(listedOne?.status).toBe(200);
    expect(listedOne?.headers.get('x-delisted-at')).toBeNull();
  }, 60_000);

  it('is shown delisted, with the date, on its endpoint page and JSON twin', async () => {
    const crawlRun = await publishedRun(join(dir, 'crawl'));
    const history = await readSiteHistory({
      dataDir: dir,
      baseUrl: BASE_URL,
      builtAt: new Date(Date.UTC(2026, 5, 9)).toISOString(),
      crawlRun,
      bazaarRun: null,
    });
    writeEndpointPages(history, join(dir, 'site'), SHELL, BASE_URL);
    const key = endpointKey(gone.urlNorm, gone.method);
    const page = await readFile(join(dir, 'site', 'endpoints', key, 'index.html'), 'utf8');
    expect(page).toMatch(/<strong>Delisted<\/strong> on 8 Jun 2026/);
    const twin = JSON.parse(await readFile(join(dir, 'site', 'endpoints', `${key}.json`), 'utf8'));
    expect(twin.delisted).toMatchObject({ delisted_at: RUN_2_FINISHED.toISOString() });
    const host = history.endpoints.get(key)?.host as string;
    const hostPage = await readFile(join(dir, 'site', 'hosts', host, 'index.html'), 'utf8');
    expect(hostPage).toContain('<span class="muted">delisted 8 Jun 2026</span>');
    const keptKey = [...history.endpoints.values()].find((e) => e.url === kept.url)?.key as string;
    const keptPage = await readFile(join(dir, 'site', 'endpoints', keptKey, 'index.html'), 'utf8');
    expect(keptPage).not.toContain('Delisted');
  }, 60_000);

  it('is no longer shown delisted once a later run lists it again', async () => {
    await run(30, new Date(Date.UTC(2026, 5, 15, 12)), 3);
    const answer = await byUrl(gone.url, gone.method);
    expect(answer?.status).toBe(200);
    expect(answer?.headers.get('x-delisted-at')).toBeNull();
  }, 120_000);
});
