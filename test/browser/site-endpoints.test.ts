/**
 * The endpoint, host and task pages and the search (docs/site.md "Endpoint, host and task pages", "Search"): three
 * crawls written by the crawl's own code (`test/fixtures/crawl-run.ts`), the last of which sees a new wallet on
 * every third endpoint, and a known-answer run's published files, built with `npm run build:site`, served by a
 * plain static file server and walked by Debian's chromium at 1280 and 390 px.
 */
import { mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointKeyOfUrl, endpointPagePath } from '../../core/endpoint-paths.ts';
import { formatDay } from '../../core/endpoint-timeline.ts';
import { formatTime } from '../../core/format.ts';
import { type FixtureRun, writeCrawlFixture } from '../fixtures/crawl-run.ts';
import { writeKnownAnswerRun } from '../fixtures/known-answer-run.ts';
import { launchChromium } from '../helpers/browser.ts';
import { buildSiteIn, SITE_BASE_URL } from '../helpers/site.ts';
import { startStaticServer } from '../helpers/static-server.ts';

const DAY = 86_400_000;
/** Endpoint 3 of the fixture: listed with a price and no wallet, so it stays `pay` when its wallet changes. */
const URL3 = 'https://seller-3.example/api/item-3';
const TASK = 'weather-now';
const WIDTHS = [1280, 390] as const;

let dataDir: string;
let site: string;
let runs: FixtureRun[];
let browser: Browser;
let server: { url: string; close(): Promise<void> };
/** What the first `npm run build:site` printed. */
let built: string;

/** A known-answer run: one task, four calls. */
function writeKnownAnswers(dir: string): Promise<void> {
  const task = {
    name: TASK,
    title: 'Current weather',
    description: 'The weather now at a place.',
    request: { method: 'GET' },
    candidates: [URL3],
  };
  const calls = ['pass', 'pass', 'pass', 'fail'].map((known_answer) => ({
    endpoint_url: URL3,
    task: TASK,
    known_answer,
    called_at: new Date().toISOString(),
  }));
  return writeKnownAnswerRun(dir, { runId: '20260101T000000Z-abcd', tasks: [task], calls });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sc-site-endpoints-'));
  const now = Date.now();
  runs = [];
  for (const [i, days] of [20, 10, 2].entries())
    runs.push(
      await writeCrawlFixture({
        dataDir,
        baseUrl: SITE_BASE_URL,
        endpoints: 60,
        finishedAt: new Date(now - days * DAY),
        seed: i + 1,
        walletShift: days === 2 ? 7 : 0,
      }),
    );
  await writeKnownAnswers(dataDir);
  built = await buildSiteIn(dataDir);
  site = await realpath(join(dataDir, 'site'));
  server = await startStaticServer(site);
  browser = await launchChromium();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const key3 = endpointKeyOfUrl(URL3, 'GET') as string;
const factsOf = (run: FixtureRun | undefined) => {
  const facts = run?.facts.find((f) => f.url === URL3);
  if (facts === undefined) throw new Error('endpoint 3 is not in the run');
  return facts;
};

async function pageAt(width: number): Promise<Page> {
  return (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
}

async function open(page: Page, path: string): Promise<void> {
  const res = await page.goto(`${server.url}${path}`);
  expect(res?.status(), path).toBe(200);
}

/** The page is no wider than the screen: wide content scrolls inside its own box. */
async function fitsScreen(page: Page, width: number): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
}

/** Every link of `main` to a page of this site answers 200. */
async function linksResolve(page: Page, prefix: string): Promise<number> {
  const hrefs = await page
    .locator(`main a[href^="${prefix}"]`)
    .evaluateAll((links) => links.map((a) => a.getAttribute('href') as string));
  for (const href of new Set(hrefs))
    expect((await page.request.get(`${server.url}${href}`)).status(), href).toBe(200);
  return hrefs.length;
}

describe('the endpoint page', () => {
  for (const width of WIDTHS)
    it(`shows the wallet change on its timeline at the right date, with table, listing and pass rate (${width} px)`, async () => {
      const page = await pageAt(width);
      await open(page, endpointPagePath(key3));
      await expect(page.locator('h1').textContent()).resolves.toContain(URL3);
      const changed = factsOf(runs[2]);
      expect(changed.pay_to).not.toBe(factsOf(runs[1]).pay_to);
      const mark = page.locator('figure.timeline svg g.change[data-field="pay_to"]');
      await expect(mark.count()).resolves.toBe(1);
      await expect(mark.getAttribute('data-at')).resolves.toBe(changed.issued_at);
      await expect(mark.locator('text').textContent()).resolves.toBe(
        `wallet changed ${formatDay(changed.issued_at, false)}`,
      );
      await expect(mark.locator('title').textContent()).resolves.toContain(
        `on ${formatDay(changed.issued_at)}: ${factsOf(runs[1]).pay_to} to ${changed.pay_to}`,
      );
      // The table fallback: the run of the old wallet, then the new one.
      const rows = page.locator('table.rows').first().locator('tbody tr');
      await expect(rows.count()).resolves.toBe(2);
      // One check with the new wallet: its row is dated to the minute.
      await expect(rows.nth(1).textContent()).resolves.toContain(formatTime(changed.issued_at));
      const main = (await page.locator('main').textContent()) ?? '';
      expect(main).toMatch(/Payment terms \(price, wallet, network\) unchanged for \d+ days?, since/);
      expect(main).toContain('Listed by payai');
      expect(main).toContain(`Task ${TASK}`);
      expect(main).toContain('known-answer pass rate 75 % (3 of 4 checked answers)');
      expect(await linksResolve(page, '/')).toBeGreaterThan(3);
      await fitsScreen(page, width);
      await page.context().close();
    });

  it('has a JSON twin with the change, and stays under 100 KB over the wire', async () => {
    const json = JSON.parse(await readFile(join(site, 'endpoints', `${key3}.json`), 'utf8'));
    expect(json).toMatchObject({ key: key3, url: URL3, method: 'GET', host: 'seller-3.example' });
    expect(json.changes).toEqual([
      expect.objectContaining({ field: 'pay_to', at: factsOf(runs[2]).issued_at }),
    ]);
    expect(json.checks).toHaveLength(3);
    expect(json.known_answers).toEqual([expect.objectContaining({ task: TASK, passes: 3, checked: 4 })]);
    const html = await readFile(join(site, 'endpoints', key3, 'index.html'));
    expect(gzipSync(html).length).toBeLessThan(100 * 1024);
  });
});

describe('the host and task pages', () => {
  for (const width of WIDTHS)
    it(`list their endpoints with their state, each linked to its page (${width} px)`, async () => {
      const page = await pageAt(width);
      await open(page, '/hosts/seller-3.example/');
      const rows = page.locator('table.rows tbody tr');
      // Endpoints 3 and 43 of 60 are on host seller-3 (hosts are i % 40).
      await expect(rows.count()).resolves.toBe(2);
      await expect(rows.first().textContent()).resolves.toContain(URL3);
      await expect(rows.first().locator('.v-pay').count()).resolves.toBe(1);
      expect(await linksResolve(page, '/endpoints/')).toBe(2);
      await fitsScreen(page, width);
      await open(page, `/tasks/${TASK}/`);
      expect(await linksResolve(page, '/endpoints/')).toBe(1);
      await expect(page.locator('main').textContent()).resolves.toContain('75 %');
      await fitsScreen(page, width);
      await page.context().close();
    });
});

describe('links to the endpoint and host pages', () => {
  it('from every skip, receipt and badge page', async () => {
    const page = await pageAt(1280);
    await open(page, '/v1/skips/');
    const skips = await linksResolve(page, '/endpoints/');
    expect(skips).toBe(JSON.parse(await readFile(join(site, 'v1', 'skips.json'), 'utf8')).skips.length);
    await open(page, `/receipts/${factsOf(runs[2]).id}/`);
    await expect(page.locator(`main a[href="${endpointPagePath(key3)}"]`).count()).resolves.toBe(1);
    await open(page, '/badge/seller-3.example/');
    await expect(page.locator('main a[href="/hosts/seller-3.example/"]').count()).resolves.toBe(1);
    await page.context().close();
  });
});

describe('search', () => {
  // The whole answer: the hosts, services and tasks answer first, the endpoints once their bundle is merged in.
  const results = async (page: Page) => {
    await page.locator('#search-results[data-complete="true"] li a').first().waitFor({ timeout: 10_000 });
    return page.locator('#search-results li a').evaluateAll((links) =>
      links.map((a) => {
        // With the hash: a service's record is its endpoint's page at `#known-answers`.
        const url = new URL((a as HTMLAnchorElement).href);
        return url.pathname + url.hash;
      }),
    );
  };

  for (const width of WIDTHS)
    it(`finds an endpoint by its host from the box on every page (${width} px)`, async () => {
      const page = await pageAt(width);
      await open(page, '/stats/');
      await page.locator('header input[type="search"]').fill('seller-3.example');
      await page.locator('header form[role="search"] button').click();
      await page.waitForURL(/\/search\/\?q=seller-3\.example/);
      const found = await results(page);
      expect(found).toContain(endpointPagePath(key3));
      expect(found).toContain('/hosts/seller-3.example/');
      await fitsScreen(page, width);
      await page.context().close();
    });

  it('answers from the hosts, services and tasks first, then merges the endpoints in', async () => {
    const page = await pageAt(1280);
    // The endpoints' bundle is held back until the first answer is on the page.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/pagefind-endpoints/**', async (route) => {
      await held;
      await route.continue();
    });
    await open(page, '/search/?q=seller-3.example');
    await page.locator('#search-results[data-complete="false"] li a').first().waitFor({ timeout: 10_000 });
    const first = await page.locator('#search-results li a').evaluateAll((links) =>
      links.map((a) => {
        // With the hash: a service's record is its endpoint's page at `#known-answers`.
        const url = new URL((a as HTMLAnchorElement).href);
        return url.pathname + url.hash;
      }),
    );
    expect(first).toContain('/hosts/seller-3.example/');
    expect(first).not.toContain(endpointPagePath(key3));
    await expect(page.locator('#search-results > p').first().textContent()).resolves.toContain(
      'looking through the endpoints',
    );
    release();
    const found = await results(page);
    expect(found).toContain(endpointPagePath(key3));
    expect(found).toContain('/hosts/seller-3.example/');
    await page.context().close();
  });

  it('finds an endpoint and its task by the task name', async () => {
    const page = await pageAt(1280);
    await open(page, `/search/?q=${TASK}`);
    const found = await results(page);
    expect(found).toContain(endpointPagePath(key3));
    expect(found).toContain(`/tasks/${TASK}/`);
    await page.context().close();
  });
});

describe('accessibility', () => {
  it('axe finds no serious or critical violation on the endpoint, host, task and search pages', async () => {
    const page = await pageAt(1280);
    for (const path of [
      endpointPagePath(key3),
      '/hosts/seller-3.example/',
      `/tasks/${TASK}/`,
      '/search/?q=seller',
    ]) {
      await open(page, path);
      if (path.startsWith('/search/'))
        await page.locator('#search-results[data-complete="true"] li a').first().waitFor();
      const { violations } = await new AxeBuilder({ page }).analyze();
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${path}: ${v.id} ${v.help} ${v.nodes[0]?.html.slice(0, 120)}`)).toEqual([]);
    }
    await page.context().close();
  }, 60_000);
});

describe('the build command', () => {
  it('prints each phase as it goes', () => {
    for (const phase of ['astro', 'receipt pages', 'history', 'endpoint pages', 'search index'])
      expect(built).toMatch(
        new RegExp(`\\[spotcheck\\] ${phase}…\\n[^]*\\[spotcheck\\] ${phase}: done in \\d+\\.\\d s`),
      );
  });

  it('rebuilds with no new run without rewriting an endpoint, host or task page', async () => {
    const again = await buildSiteIn(dataDir);
    expect(again).toMatch(/\(0 files written, [1-9]\d* unchanged kept\)/);
    const next = await realpath(join(dataDir, 'site'));
    expect(next).not.toBe(site);
    const page = join('endpoints', key3, 'index.html');
    expect((await stat(join(next, page))).ino).toBe((await stat(join(site, page))).ino);
    // The same records: the search index is linked from the build before, not built again.
    for (const bundle of ['pagefind', 'pagefind-endpoints']) {
      const entry = join(bundle, 'pagefind-entry.json');
      expect((await stat(join(next, entry))).ino, bundle).toBe((await stat(join(site, entry))).ino);
    }
  }, 240_000);
});
