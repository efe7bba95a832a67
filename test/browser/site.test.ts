/**
 * The built site in a real browser: a real crawl of the sandbox fleet and a bazaar check, built by
 * `npm run build:site`, served by the real service and by a plain static file server, walked by Debian's chromium.
 * The crawl is the published run of the showcase site the browser files share (`test/helpers/prepared-sites.ts`),
 * after some fixture history; this file reads only that run.
 * Paging needs more than the fleet's 31 endpoints: a 1,700-endpoint run written by the crawl's own code
 * (`test/fixtures/crawl-run.ts`) gives two pages of skips.
 */
import { readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRow } from '../fixtures/check-row.ts';
import { launchChromium } from '../helpers/browser.ts';
import { preparedShowcaseSite } from '../helpers/prepared-sites.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { builtFixtureSite, type SandboxSite } from '../helpers/site.ts';
import { startStaticServer } from '../helpers/static-server.ts';
import { documentedRoutes, fillRoute } from './documented-routes.ts';

// 1,700 endpoints with 30 % skips give 510 skips: two pages of the skip listing.
const VOLUME = 1700;
const HOUR = 3_600_000;

let site: SandboxSite;
let volumeDir: string;
let browser: Browser;
beforeAll(async () => {
  site = await preparedShowcaseSite();
  volumeDir = (await builtFixtureSite(VOLUME)).dataDir;
  browser = await launchChromium();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await rm(site?.dataDir ?? '/nonexistent', { recursive: true, force: true });
  await rm(volumeDir ?? '/nonexistent', { recursive: true, force: true });
});

const runFile = async (name: string) => JSON.parse(await readFile(join(site.runDir, name), 'utf8'));
const firstOf = (verdict: string) => {
  const line = site.index.find((l) => l.verdict === verdict);
  if (!line) throw new Error(`the sandbox crawl has no ${verdict}`);
  return line;
};

describe('the site of a sandbox crawl, served by the service, in chromium', () => {
  let t: TestService;
  let page: Page;
  beforeAll(async () => {
    t = await startTestService({}, {}, { dataDir: site.dataDir });
    page = await (await browser.newContext()).newPage();
  }, 120_000);
  afterAll(() => t?.stop({ keepData: true }));

  const open = async (path: string) => {
    const res = await page.goto(`${t.url}${path}`);
    expect(res?.status(), path).toBe(200);
  };
  /** Every receipt link of the page answers 200: none points at a receipt without a page. */
  const receiptLinksResolve = async () => {
    const hrefs = await page
      .locator('main a[href^="/receipts/"]')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href') as string));
    for (const href of hrefs) expect((await page.request.get(`${t.url}${href}`)).status(), href).toBe(200);
    return hrefs.length;
  };

  it('renders the home page with the crawl figures and links to everything, the API and /openapi.json', async () => {
    const first = await runFile('skips/1.json');
    await open('/');
    await expect(page.locator('h1').textContent()).resolves.toContain('check an x402 endpoint');
    const text = await page.locator('main').textContent();
    expect(text).toContain(`${first.endpoints_covered}endpoints in the last crawl`);
    expect(text).toContain(`${first.skip}skipped`);
    const hrefs = await page
      .locator('main a')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    for (const href of ['/v1/skips/', '/saves/', '/bazaar/', '/stats/', '/rules/', '/verify/', '/rules.json'])
      expect(hrefs).toContain(href);
    expect(hrefs.some((href) => href?.endsWith('/openapi.json'))).toBe(true);
  });

  it('lists the skips, saves and bazaar results the crawl wrote, each linking a receipt page that exists', async () => {
    const skips = await runFile('skips/1.json');
    await open('/v1/skips/');
    expect(await page.locator('tbody tr').count()).toBe(skips.skips.length);
    expect(await receiptLinksResolve()).toBe(skips.skips.length);
    const saves = await runFile('saves.json');
    await open('/saves/');
    expect(await page.locator('tbody tr').count()).toBe(saves.count);
    expect(await receiptLinksResolve()).toBe(saves.count);
    await open('/bazaar/');
    expect(await page.locator('tbody tr').count()).toBe(5);
    expect(await receiptLinksResolve()).toBe(5);
  });

  it('shows every reason code and supported network of the rules document, and the charts of the statistics', async () => {
    const rules = await runFile('rules.json');
    await open('/rules/');
    const text = await page.locator('main').textContent();
    for (const reason of rules.reasons as Array<{ code: string }>) expect(text).toContain(reason.code);
    const networks = rules.supported_networks as Array<{ network: string; usdc: string }>;
    expect(networks.length).toBeGreaterThan(0);
    for (const { network, usdc } of networks) expect(text).toContain(`${network}${usdc}`);
    await open('/stats/');
    expect(await page.locator('main svg').count()).toBeGreaterThanOrEqual(3);
  });

  it('shows a real receipt with its kid and signature; the verifier says valid', async () => {
    const line = firstOf('pay');
    const receipt = await site.receipt(line.id);
    await open(`/receipts/${line.id}/`);
    const text = await page.locator('main').textContent();
    expect(text).toContain(line.url);
    // The kid and the signature are shortened, each whole in its title and its copy button (docs/site.md "Look").
    for (const value of [site.kid, String(receipt.signature)]) {
      await expect(page.locator(`main code[title="${value}"]`).count(), value).resolves.toBe(1);
      await expect(page.locator(`main button.copy[data-copy="${value}"]`).count(), value).resolves.toBe(1);
    }
    expect(await (await page.request.get(`${t.url}/receipts/${line.id}.json`)).json()).toEqual(receipt);
    await page.getByRole('link', { name: 'Verify this receipt in your browser' }).click();
    await expect(page.locator('#result[data-ok="true"]').textContent({ timeout: 15_000 })).resolves.toContain(
      `Valid: signed by key ${site.kid}`,
    );
  });

  it('says invalid for a real receipt whose verdict was changed', async () => {
    const receipt = await site.receipt(firstOf('skip').id);
    await open('/verify/');
    await page.locator('#json').fill(JSON.stringify({ ...receipt, verdict: 'pay' }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(
      page.locator('#result[data-ok="false"]').textContent({ timeout: 15_000 }),
    ).resolves.toContain('Bad signature');
  });

  it('says invalid for a real receipt with a second verdict member, which JSON.parse would drop', async () => {
    const receipt = await site.receipt(firstOf('skip').id);
    await open('/verify/');
    // A reader keeping the first copy sees "pay"; the signature covers the last copy ("skip").
    await page.locator('#json').fill(`{"verdict":"pay",${JSON.stringify(receipt).slice(1)}`);
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(
      page.locator('#result[data-ok="false"]').textContent({ timeout: 15_000 }),
    ).resolves.toContain('names a member twice');
  });

  it('draws a badge grey once its latest check is older than 72 h, green while fresh', async () => {
    const now = Date.now();
    t.service.deps.store.indexReceipts([
      checkRow('sc-aaaaaaaaaaaaaaaaaaaaaaaaaa', 'https://old.example/a', 'pay', iso(now - 73 * HOUR), {}, 9),
      checkRow('sc-baaaaaaaaaaaaaaaaaaaaaaaaa', 'https://fresh.example/a', 'pay', iso(now - HOUR), {}, 9),
    ]);
    await open('/badge/old.example.svg');
    expect(await page.locator('svg').getAttribute('aria-label')).toBe('spotcheck: stale');
    await open('/badge/fresh.example.svg');
    expect(await page.locator('svg').getAttribute('aria-label')).toBe('spotcheck: pay · stable 9 days');
  });

  it('renders the badge page of a crawled host with its live image', async () => {
    const host = firstOf('pay').host;
    await open(`/badge/${host}/`);
    const image = page.locator('main img');
    await expect(image.getAttribute('src')).resolves.toBe(`/badge/${host}.svg`);
    expect(await image.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(40);
  });

  it('has no serious or critical accessibility violation on any page template', async () => {
    const templates = ['/', '/v1/skips/', '/saves/', '/bazaar/', '/stats/', '/rules/', '/verify/'];
    templates.push(`/receipts/${firstOf('skip').id}/`, `/badge/${firstOf('pay').host}/`);
    for (const path of templates) {
      await open(path);
      const { violations } = await new AxeBuilder({ page }).analyze();
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${path}: ${v.id} ${v.help} ${v.nodes[0]?.html.slice(0, 120)}`)).toEqual([]);
    }
  }, 240_000);

  it('never scrolls sideways on a phone: wide tables scroll inside their own box', async () => {
    const phone = await (await browser.newContext({ viewport: { width: 390, height: 800 } })).newPage();
    const templates = ['/', '/v1/skips/', '/saves/', '/bazaar/', '/stats/', '/rules/', '/verify/'];
    templates.push(`/receipts/${firstOf('skip').id}/`, `/badge/${firstOf('pay').host}/`);
    const overflow: string[] = [];
    for (const path of templates) {
      await phone.goto(`${t.url}${path}`);
      const extra = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (extra > 0) overflow.push(`${path}: ${extra} px`);
    }
    await phone.context().close();
    expect(overflow).toEqual([]);
  }, 120_000);
});

describe('paging through 510 skips', () => {
  let t: TestService;
  let page: Page;
  beforeAll(async () => {
    t = await startTestService({}, {}, { dataDir: volumeDir });
    page = await (await browser.newContext()).newPage();
  }, 120_000);
  afterAll(() => t?.stop({ keepData: true }));

  it('works both ways, by link and through ?page=N, on the service', async () => {
    await page.goto(`${t.url}/v1/skips/`);
    expect(await page.locator('tbody tr').count()).toBe(500);
    await page.getByRole('link', { name: 'Page 2 →' }).first().click();
    await page.waitForURL('**/v1/skips/page/2/');
    expect(await page.locator('tbody tr').count()).toBe(10);
    await expect(page.locator('h1').textContent()).resolves.toContain('page 2 of 2');
    await page.getByRole('link', { name: '← Page 1' }).first().click();
    await page.waitForURL('**/v1/skips/');
    expect(await page.locator('tbody tr').count()).toBe(500);
    expect((await page.goto(`${t.url}/v1/skips?page=2`))?.status()).toBe(200);
    expect(await page.locator('tbody tr').count()).toBe(10);
    const json = await (await page.request.get(`${t.url}/v1/skips.json?page=2`)).json();
    expect(json).toMatchObject({ page: 2, pages: 2 });
    expect(json.skips).toHaveLength(10);
  });

  it('has no serious or critical accessibility violation on a second page', async () => {
    await page.goto(`${t.url}/v1/skips/page/2/`);
    const { violations } = await new AxeBuilder({ page }).analyze();
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
  });
});

describe('the same builds copied to a plain static file server', () => {
  it('pages, shows receipts and verifies one with no server behind it', async () => {
    const server = await startStaticServer(await realpath(join(volumeDir, 'site')));
    const page = await (await browser.newContext()).newPage();
    try {
      await page.goto(`${server.url}/`);
      await page.getByRole('link', { name: 'Skipped endpoints' }).click();
      await page.getByRole('link', { name: 'Page 2 →' }).first().click();
      await page.waitForURL('**/v1/skips/page/2/');
      expect(await page.locator('tbody tr').count()).toBe(10);
      // The last cell of a row links its receipt (the first links the endpoint's page).
      await page.locator('tbody tr td:last-child a').first().click();
      await page.waitForURL('**/receipts/sc-*/');
      await page.getByRole('link', { name: 'Verify this receipt in your browser' }).click();
      await expect(
        page.locator('#result[data-ok="true"]').textContent({ timeout: 15_000 }),
      ).resolves.toContain('Valid: signed by key');
    } finally {
      await server.close();
    }
  });

  it('serves the sandbox crawl: a receipt page verifies and a badge is drawn', async () => {
    const server = await startStaticServer(await realpath(join(site.dataDir, 'site')));
    const page = await (await browser.newContext()).newPage();
    try {
      const line = firstOf('pay');
      await page.goto(`${server.url}/receipts/${line.id}/`);
      await page.getByRole('link', { name: 'Verify this receipt in your browser' }).click();
      await expect(
        page.locator('#result[data-ok="true"]').textContent({ timeout: 15_000 }),
      ).resolves.toContain(`Valid: signed by key ${site.kid}`);
      const badge = await page.request.get(`${server.url}/badge/${line.host}.svg`);
      expect(await badge.text()).toContain('aria-label="spotcheck: pay · stable');
    } finally {
      await server.close();
    }
  });
});

describe('every route the docs and the setup pack name', () => {
  it('is served: none answers the no-such-route 404 or a 5xx', async () => {
    const t = await startTestService({}, {}, { dataDir: site.dataDir, listen: false });
    try {
      const routes = await documentedRoutes();
      expect(routes.length).toBeGreaterThan(30);
      const line = firstOf('pay');
      const missing: string[] = [];
      for (const route of routes) {
        const path = fillRoute(route, line);
        const res = await t.service.app.fetch(new Request(`http://127.0.0.1${path}`));
        const body =
          res.status === 404 ? ((await res.json().catch(() => ({}))) as { error?: { code?: string } }) : {};
        if (res.status >= 500 || body.error?.code === 'not_found')
          missing.push(`${route} → ${path}: ${res.status}`);
      }
      expect(missing).toEqual([]);
    } finally {
      await t.stop({ keepData: true });
    }
  }, 120_000);
});

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
