/**
 * Every template of the site, at 1280 and 390 px, in Debian's chromium (docs/site.md "Look", "Tests and
 * screenshots"): axe-core finds no serious or critical violation, no page scrolls sideways, every verdict reads without
 * colour (its word and a mark), and the pages stay under 100 KB over the wire, the search page with its results too.
 * The showcase site (`test/helpers/showcase-site.ts`) fills every template; the real service serves it, so the 404
 * page and the server's own receipt page are the ones a browser gets.
 */
import { rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointPagePath } from '../../core/endpoint-paths.ts';
import { launchChromium } from '../helpers/browser.ts';
import { preparedShowcaseSite } from '../helpers/prepared-sites.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { SHOWCASE_TASK, type ShowcaseSite } from '../helpers/showcase-site.ts';

const WIDTHS = [1280, 390] as const;
const KB = 1024;

let site: ShowcaseSite;
let t: TestService;
let browser: Browser;
beforeAll(async () => {
  site = await preparedShowcaseSite();
  t = await startTestService({}, {}, { dataDir: site.dataDir });
  browser = await launchChromium();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop({ keepData: true });
  await rm(site?.dataDir ?? '/nonexistent', { recursive: true, force: true });
});

/** Every template, by name: the path and the status a browser gets. */
function templates(): Array<[string, string, number]> {
  const skip = site.index.find((line) => line.verdict === 'skip');
  const pay = site.index.find((line) => line.verdict === 'pay');
  if (skip === undefined || pay === undefined) throw new Error('the sandbox crawl has no skip or no pay');
  return [
    ['home', '/', 200],
    ['skips', '/v1/skips/', 200],
    ['saves', '/saves/', 200],
    ['bazaar', '/bazaar/', 200],
    ['statistics', '/stats/', 200],
    ['rules', '/rules/', 200],
    ['receipt page', `/receipts/${skip.id}/`, 200],
    ['receipt from the server', `/v1/receipts/${pay.id}`, 200],
    ['badge', `/badge/${pay.host}/`, 200],
    ['verify', `/verify/?receipt=/receipts/${skip.id}.json`, 200],
    ['endpoint', endpointPagePath(site.changedKey), 200],
    ['host', '/hosts/seller-3.example/', 200],
    ['task', `/tasks/${SHOWCASE_TASK}/`, 200],
    ['search', '/search/?q=seller-3', 200],
    ['404', '/no-such-page/', 404],
  ];
}

async function open(page: Page, path: string, status: number): Promise<void> {
  const res = await page.goto(`${t.url}${path}`);
  expect(res?.status(), path).toBe(status);
  if (path.startsWith('/search/'))
    await page.locator('#search-results[data-complete="true"] li a').first().waitFor();
  if (path.startsWith('/verify/')) await page.locator('#result[data-ok="true"]').waitFor();
}

describe('every template', () => {
  for (const width of WIDTHS)
    it(`has no serious or critical axe violation, fits the screen and shows verdicts in words (${width} px)`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      const bad: string[] = [];
      const wide: string[] = [];
      const colourOnly: string[] = [];
      for (const [name, path, status] of templates()) {
        await open(page, path, status);
        const { violations } = await new AxeBuilder({ page }).analyze();
        for (const v of violations)
          if (v.impact === 'serious' || v.impact === 'critical')
            bad.push(`${name} ${path}: ${v.id} ${v.help} ${v.nodes[0]?.html.slice(0, 120)}`);
        const extra = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (extra > 0) wide.push(`${name}: ${extra} px`);
        // A verdict carries its word and a mark, not only a colour.
        colourOnly.push(
          ...(await page.locator('.v-pay, .v-skip, .v-recheck').evaluateAll((nodes) =>
            nodes
              .filter((node) => {
                const verdict = node.className.replace(/^.*\bv-(\w+).*$/, '$1');
                const mark = getComputedStyle(node, '::before').content;
                return !(node.textContent ?? '').includes(verdict) || mark === 'none' || mark === 'normal';
              })
              .map((node) => node.outerHTML.slice(0, 80)),
          )),
        );
      }
      await context.close();
      expect(bad).toEqual([]);
      expect(wide).toEqual([]);
      expect(colourOnly).toEqual([]);
    }, 240_000);

  it('each shows the name mark and the site search box', async () => {
    const page = await browser.newPage();
    for (const [name, path, status] of templates()) {
      await open(page, path, status);
      await expect(page.locator('header a.brand svg').count(), name).resolves.toBe(1);
      await expect(page.locator('header form[role="search"] input[name="q"]').count(), name).resolves.toBe(1);
    }
    await page.close();
  }, 120_000);
});

/** Every byte a page loads, gzipped as a CDN sends text (wasm and images are already compressed), by URL. */
async function weigh(path: string, ready?: string): Promise<Map<string, number>> {
  const page = await browser.newPage();
  const sizes = new Map<string, number>();
  const reads: Promise<void>[] = [];
  page.on('response', (res) => {
    reads.push(
      res
        .body()
        .then((body) => void sizes.set(new URL(res.url()).pathname, gzipSync(body).length))
        .catch(() => {}),
    );
  });
  await page.goto(`${t.url}${path}`);
  if (ready !== undefined) await page.locator(ready).first().waitFor();
  await page.waitForLoadState('networkidle');
  await Promise.all(reads);
  await page.close();
  return sizes;
}

const total = (sizes: Map<string, number>) => [...sizes.values()].reduce((a, b) => a + b, 0);

describe('page weight over the wire', () => {
  it('home, skips, endpoint and receipt pages stay under 100 KB', async () => {
    const receipt = site.index[0]?.id;
    for (const path of ['/', '/v1/skips/', endpointPagePath(site.changedKey), `/receipts/${receipt}/`]) {
      const sizes = await weigh(path);
      expect(total(sizes), `${path}: ${JSON.stringify([...sizes])}`).toBeLessThan(100 * KB);
    }
  }, 60_000);

  it('the search page loads no search script until asked, and stays light with its results', async () => {
    const idle = await weigh('/search/');
    expect([...idle.keys()].filter((p) => p.startsWith('/pagefind'))).toEqual([]);
    const sizes = await weigh('/search/?q=seller-3', '#search-results[data-complete="true"] li a');
    const loaded = [...sizes.keys()];
    // Pagefind's JS API on the page's own thread: no UI script or stylesheet, no worker.
    expect(loaded.filter((p) => /pagefind-(ui|worker|component|modular)/.test(p))).toEqual([]);
    expect(loaded).toContain('/pagefind/pagefind.js');
    // The endpoints' bundle is merged into the first (docs/site.md "Search"): its page list and index only, never a
    // second copy of Pagefind's script or wasm.
    const merged = loaded.filter((p) => p.startsWith('/pagefind-endpoints/'));
    expect(merged.some((p) => p.endsWith('.pf_meta'))).toBe(true);
    expect(merged.filter((p) => p.endsWith('.js') || p.includes('wasm'))).toEqual([]);
    expect(total(sizes), JSON.stringify([...sizes])).toBeLessThan(100 * KB);
    // What does not grow with the index (the page, Pagefind's script and wasm) leaves 20 KB for the index's files:
    // a page list (`*.pf_meta`) grows about 5.2 bytes a page, and a search at 3,000 endpoints loaded 17.1 KB of
    // index files (15.7 KB of them the page list; docs/site.md "Search").
    const fixed = [...sizes].filter(([p]) => !/\.pf_(meta|index|fragment|filter)$/.test(p));
    expect(total(new Map(fixed)), JSON.stringify(fixed)).toBeLessThan(80 * KB);
  }, 60_000);
});
