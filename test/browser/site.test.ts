/**
 * The built site in a real browser (issue 11 item 6): a fixture crawl run with real signed receipts, built by
 * `npm run build:site` and served by the real service, walked by Debian's chromium.
 */
import { realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRow } from '../fixtures/check-row.ts';
import type { FixtureRun } from '../fixtures/crawl-run.ts';
import { launchChromium } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { builtFixtureSite } from '../helpers/site.ts';
import { startStaticServer } from '../helpers/static-server.ts';

// 1,700 endpoints give 510 skips: two pages of the skip listing.
const ENDPOINTS = 1700;
const HOUR = 3_600_000;

// One fixture run and one build serve both suites below.
let run: FixtureRun;
let dataDir: string;
beforeAll(async () => {
  ({ dataDir, run } = await builtFixtureSite(ENDPOINTS));
}, 240_000);
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe('the public site in chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    t = await startTestService({}, {}, { dataDir });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop({ keepData: true });
  });

  const open = async (path: string) => {
    const res = await page.goto(`${t.url}${path}`);
    expect(res?.status(), path).toBe(200);
    return res;
  };

  it('renders the home page with the run figures and links to the listings, the API and /openapi.json', async () => {
    await open('/');
    await expect(page.locator('h1').textContent()).resolves.toContain('check an x402 endpoint');
    const text = await page.locator('main').textContent();
    expect(text).toContain('1,700');
    expect(text).toContain('510');
    const hrefs = await page
      .locator('main a')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    for (const href of [
      '/v1/skips/',
      '/saves/',
      '/bazaar/',
      '/stats/',
      '/rules/',
      '/verify/',
      '/rules.json',
    ]) {
      expect(hrefs).toContain(href);
    }
    expect(hrefs.some((href) => href?.endsWith('/openapi.json'))).toBe(true);
  });

  it('pages through the skip listing both ways, by link and through ?page=N', async () => {
    await open('/v1/skips/');
    expect(await page.locator('tbody tr').count()).toBe(500);
    await page.getByRole('link', { name: 'Page 2 →' }).first().click();
    await page.waitForURL('**/v1/skips/page/2/');
    expect(await page.locator('tbody tr').count()).toBe(10);
    await expect(page.locator('h1').textContent()).resolves.toContain('page 2 of 2');
    await page.getByRole('link', { name: '← Page 1' }).first().click();
    await page.waitForURL('**/v1/skips/');
    expect(await page.locator('tbody tr').count()).toBe(500);
    await open('/v1/skips?page=2');
    expect(await page.locator('tbody tr').count()).toBe(10);
    const json = await (await page.request.get(`${t.url}/v1/skips.json?page=2`)).json();
    expect(json.page).toBe(2);
    expect(json.skips).toHaveLength(10);
  });

  it('shows a receipt page that links the raw signed file and the verifier, which says valid', async () => {
    const receipt = run.receipts[3];
    await open(`/receipts/${receipt?.id}/`);
    const text = await page.locator('main').textContent();
    expect(text).toContain(String(receipt?.kid));
    expect(text).toContain(String(receipt?.signature));
    const raw = await page.request.get(`${t.url}/receipts/${receipt?.id}.json`);
    expect(await raw.json()).toEqual(receipt);
    await page.getByRole('link', { name: 'Verify this receipt in your browser' }).click();
    await expect(page.locator('#result[data-ok="true"]').textContent({ timeout: 15_000 })).resolves.toContain(
      `Valid: signed by key ${run.kid}`,
    );
  });

  it('says invalid for a receipt whose verdict was changed', async () => {
    const receipt = run.receipts.find((item) => item.verdict === 'skip');
    await open('/verify/');
    await page.locator('#json').fill(JSON.stringify({ ...receipt, verdict: 'pay' }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(
      page.locator('#result[data-ok="false"]').textContent({ timeout: 15_000 }),
    ).resolves.toContain('Bad signature');
  });

  it('draws a badge grey once its latest check is older than 72 h, green while fresh', async () => {
    const now = Date.now();
    t.service.deps.store.indexReceipts([
      checkRow(
        'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa',
        'https://old.example/a',
        'pay',
        new Date(now - 73 * HOUR).toISOString(),
        {},
        9,
      ),
      checkRow(
        'sc-baaaaaaaaaaaaaaaaaaaaaaaaa',
        'https://fresh.example/a',
        'pay',
        new Date(now - HOUR).toISOString(),
        {},
        9,
      ),
    ]);
    await open('/badge/old.example.svg');
    expect(await page.locator('svg').getAttribute('aria-label')).toBe('spotcheck: stale');
    await open('/badge/fresh.example.svg');
    expect(await page.locator('svg').getAttribute('aria-label')).toBe('spotcheck: pay · stable 9 days');
  });

  it('renders the badge page of a crawled host with its live image', async () => {
    await open('/badge/seller-1.example/');
    const image = page.locator('main img');
    await expect(image.getAttribute('src')).resolves.toBe('/badge/seller-1.example.svg');
    expect(await image.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(40);
  });

  it('has no serious or critical accessibility violation on any page template', async () => {
    const templates = [
      '/',
      '/v1/skips/',
      '/v1/skips/page/2/',
      '/saves/',
      '/bazaar/',
      '/stats/',
      '/rules/',
      '/verify/',
      `/receipts/${run.receipts[0]?.id}/`,
      '/badge/seller-1.example/',
    ];
    for (const path of templates) {
      await open(path);
      const { violations } = await new AxeBuilder({ page }).analyze();
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${path}: ${v.id} ${v.help} ${v.nodes[0]?.html.slice(0, 120)}`)).toEqual([]);
    }
  }, 240_000);
});

describe('the same build copied to a plain static file server', () => {
  let browser: Browser;
  let page: Page;
  let server: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    server = await startStaticServer(await realpath(join(dataDir, 'site')));
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('pages, shows receipts and verifies one with no server behind it', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Skipped endpoints' }).click();
    await page.getByRole('link', { name: 'Page 2 →' }).first().click();
    await page.waitForURL('**/v1/skips/page/2/');
    expect(await page.locator('tbody tr').count()).toBe(10);
    await page.locator('tbody a').first().click();
    await page.waitForURL('**/receipts/sc-*/');
    await page.getByRole('link', { name: 'Verify this receipt in your browser' }).click();
    await expect(page.locator('#result[data-ok="true"]').textContent({ timeout: 15_000 })).resolves.toContain(
      `Valid: signed by key ${run.kid}`,
    );
    const badge = await page.request.get(`${server.url}/badge/seller-1.example.svg`);
    expect(await badge.text()).toContain('aria-label="spotcheck: pay · stable');
  });
});

describe('every route the docs and the setup pack name', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({}, {}, { dataDir, listen: false });
  }, 120_000);
  afterAll(() => t?.stop({ keepData: true }));

  it('is served: none answers the no-such-route 404 or a 5xx', async () => {
    const routes = await documentedRoutes();
    expect(routes.length).toBeGreaterThan(30);
    const receipt = run.receipts[0];
    if (!receipt) throw new Error('the fixture run has no receipt');
    const host = new URL(receipt.url).host;
    const fill = (route: string) =>
      route
        .replaceAll(/<host>|\{host\}/g, host)
        .replaceAll(/<receipt_id>|<id>|\{receipt_id\}/g, receipt.id)
        .replace(/^\/v1\/receipts\/\{id\}/, `/v1/receipts/${receipt.id}`)
        .replace(/^\/receipts\/\{id\}/, `/receipts/${receipt.id}`)
        .replaceAll('{id}', 'inv-none')
        .replace(/\bN\b/g, '1')
        .replace(/url=(\.\.\.)?$/, `url=${encodeURIComponent(receipt.url)}`)
        .replace('page=&page_size=', 'page=1&page_size=10');
    const missing: string[] = [];
    for (const route of routes) {
      const path = fill(route);
      const res = await t.service.app.fetch(new Request(`http://127.0.0.1${path}`));
      const body =
        res.status === 404 ? ((await res.json().catch(() => ({}))) as { error?: { code?: string } }) : {};
      if (res.status >= 500 || body.error?.code === 'not_found')
        missing.push(`${route} → ${path}: ${res.status}`);
    }
    expect(missing).toEqual([]);
  });
});

/** Spotcheck's own paths named in backticks by the README, docs/ and the setup pack (the review's "docs say only
 *  what is true"): `GET /v1/…`, `/badge/<host>.svg`, `/rules`… Other hosts' paths (a seller's `/paid`) are left out. */
async function documentedRoutes(): Promise<string[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const files = [
    'README.md',
    ...(await readdir('docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
    'data/setup-pack/guide.md',
    ...(await readdir('data/setup-pack/prompts')).map((f) => `data/setup-pack/prompts/${f}`),
  ];
  const own =
    /^\/(v1\/|badge\/|rules|saves|bazaar|stats|verify|receipts\/|mcp$|openapi\.json|\.well-known\/jwks|healthz|$)/;
  const routes = new Set<string>();
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const match of text.matchAll(/`(?:(?:GET|POST)(?:\/POST)?\s+)?(\/[^`\s]*)`/g)) {
      const path = match[1] as string;
      if (own.test(path) && !/[*…]/.test(path)) routes.add(path);
    }
  }
  return [...routes].sort();
}
