/**
 * The site after a crawl in which a source failed (docs/data-files.md "When a source fails"): the endpoints only
 * that source listed are still on the skip listing with their receipts of the earlier crawl, each marked as carried
 * with the crawl that checked it, never shown as checked by the latest crawl; the home page says how many.
 */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrawlFacts } from '../../core/crawl-facts.ts';
import { type FixtureRun, writeCrawlFixture } from '../fixtures/crawl-run.ts';
import { buildSiteIn, SITE_BASE_URL } from '../helpers/site.ts';

const HOUR = 3_600_000;

let dataDir: string;
let site: string;
let earlier: FixtureRun;
let latest: FixtureRun;
let index: CrawlFacts[];
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sc-site-carried-'));
  const common = { dataDir, baseUrl: SITE_BASE_URL, endpoints: 100 };
  earlier = await writeCrawlFixture({ ...common, finishedAt: new Date(Date.now() - 24 * HOUR), seed: 1 });
  // The same listings a day later, with `payai` down: its odd-numbered endpoints are listed by it alone.
  latest = await writeCrawlFixture({ ...common, finishedAt: new Date(), seed: 2, failedSources: ['payai'] });
  index = (await readFile(join(latest.runDir, 'receipts.ndjson'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  await buildSiteIn(dataDir);
  site = await realpath(join(dataDir, 'site'));
}, 240_000);
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe('the site after a crawl with a failed source', () => {
  it('lists the carried skips marked as carried from the crawl that checked them, the fresh ones not', async () => {
    const carried = index.filter((line) => line.carried_from !== undefined);
    expect(carried.length).toBe(50);
    expect(new Set(carried.map((line) => line.carried_from))).toEqual(new Set([earlier.runId]));
    const carriedSkips = carried.filter((line) => line.verdict === 'skip');
    const freshSkips = index.filter((line) => line.carried_from === undefined && line.verdict === 'skip');
    expect(carriedSkips.length).toBeGreaterThan(0);
    expect(freshSkips.length).toBeGreaterThan(0);

    const html = await readFile(join(site, 'v1', 'skips', 'index.html'), 'utf8');
    const marker = `carried from crawl <code>${earlier.runId}</code>`;
    expect(html.split(marker)).toHaveLength(carriedSkips.length + 1);
    expect(html).toContain('50 more listed endpoints were not probed in this crawl');
    // Each row: a carried skip's receipt link shares its row with the marker; a fresh skip's row has none.
    const rows = html.split('<tr>').slice(1);
    for (const line of carriedSkips) {
      const row = rows.find((r) => r.includes(line.short_id));
      expect(row, line.url).toContain(marker);
    }
    for (const line of freshSkips) {
      const row = rows.find((r) => r.includes(line.short_id));
      expect(row, line.url).not.toContain('carried from crawl');
    }

    // The JSON twin carries `carried_from`, and every carried receipt still has its page.
    const json = JSON.parse(await readFile(join(site, 'v1', 'skips.json'), 'utf8'));
    expect(json.carried).toBe(50);
    for (const line of carriedSkips) {
      expect(json.skips.find((s: { id: string }) => s.id === line.short_id)).toMatchObject({
        carried_from: earlier.runId,
      });
      expect(await readFile(join(site, 'receipts', line.id, 'index.html'), 'utf8')).toContain(line.id);
    }
  });

  it('says on the home page how many endpoints were carried', async () => {
    const html = await readFile(join(site, 'index.html'), 'utf8');
    expect(html).toMatch(/and 50 carried from earlier crawls: their lists could not be read/);
    expect(latest.runId).not.toBe(earlier.runId);
  });
});
