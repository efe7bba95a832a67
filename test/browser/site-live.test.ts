/**
 * The site against the live API, in Debian's chromium: the home page's check form (docs/site.md "Check from the
 * page") runs a dry run against a real service on loopback, from the service's own origin and from a plain static
 * host (cross-origin, through the API's CORS), and says so when the API cannot be reached. The probe is the real
 * SSRF-gated prober, loopback allowed as the tests allow it, against a small seller on loopback.
 */
import { realpath } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../api/service.ts';
import { buildV2Header } from '../fixtures/challenge.ts';
import { launchChromium } from '../helpers/browser.ts';
import { freePort } from '../helpers/server-process.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { buildSiteIn } from '../helpers/site.ts';
import { startStaticServer } from '../helpers/static-server.ts';

let api: string;
let spot: TestService;
let apiServer: Server;
let seller: Server;
let sellerUrl: string;
let statics: { url: string; close(): Promise<void> };
let browser: Browser;

/** `/paid` answers an x402 402; anything else a plain 200 (no paywall). */
async function startSeller(): Promise<void> {
  seller = createServer((req, res) => {
    if (req.url === '/paid') {
      res.writeHead(402, { 'payment-required': buildV2Header(), 'content-type': 'application/json' });
      res.end('{}');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"free":true}');
    }
  });
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
  sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  await startSeller();
  const port = await freePort();
  api = `http://127.0.0.1:${port}`;
  spot = await startTestService({ BASE_URL: api }, {}, { listen: false });
  apiServer = (await listen(spot.service, '127.0.0.1', port)).server;
  // The site is built for this API; the service serves it too (it reads DATA_DIR/site on every request).
  await buildSiteIn(spot.dataDir, api);
  statics = await startStaticServer(await realpath(join(spot.dataDir, 'site')));
  browser = await launchChromium();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await statics?.close();
  apiServer?.closeAllConnections();
  await new Promise((resolve) => apiServer?.close(resolve));
  await spot?.stop();
  await new Promise((resolve) => seller?.close(resolve));
});

async function home(origin: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 390, height: 900 } })).newPage();
  const res = await page.goto(`${origin}/`);
  expect(res?.status()).toBe(200);
  return page;
}

async function checkFromForm(page: Page, url: string): Promise<string> {
  await page.getByLabel('Endpoint URL').fill(url);
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  const result = page.locator('#check-result');
  await result.and(page.locator(':not([data-state="pending"])')).waitFor();
  return (await result.getAttribute('data-state')) ?? '';
}

describe('the home page’s check form', () => {
  for (const where of ['a static host', 'the service itself'] as const)
    it(`answers a dry run from ${where}: verdict, reason and receipt link`, async () => {
      const page = await home(where === 'a static host' ? statics.url : api);
      expect(await checkFromForm(page, `${sellerUrl}/paid`)).toBe('answered');
      const result = page.locator('#check-result');
      await expect(result.locator('[data-verdict]').textContent()).resolves.toBe('pay');
      await expect(result.textContent()).resolves.toContain('price_ok');
      const href = (await result.locator('a').getAttribute('href')) ?? '';
      expect(href).toMatch(new RegExp(`^${api}/v1/receipts/sc-[a-z2-7]{26}$`));
      const receipt = await (await fetch(href, { headers: { accept: 'application/json' } })).json();
      expect(receipt).toMatchObject({ mode: 'dry-run', verdict: 'pay', url: `${sellerUrl}/paid` });

      expect(await checkFromForm(page, `${sellerUrl}/free`)).toBe('answered');
      await expect(result.locator('[data-verdict]').textContent()).resolves.toBe('skip');
      await expect(result.textContent()).resolves.toContain('no_paywall');
      await page.context().close();
    });

  it('says plainly when the API cannot be reached from the page', async () => {
    const page = await home(statics.url);
    await page.route(`${api}/**`, (route) => route.abort('connectionrefused'));
    expect(await checkFromForm(page, `${sellerUrl}/paid`)).toBe('unreachable');
    await expect(page.locator('#check-result').textContent()).resolves.toContain(
      `The live API at ${api} could not be reached from this page`,
    );
    await page.context().close();
  });

  it('shows the API’s refusal of bad input in words', async () => {
    const page = await home(statics.url);
    expect(await checkFromForm(page, 'http://user:pw@seller.example/x')).toBe('refused');
    await expect(page.locator('#check-result').textContent()).resolves.toContain('bad_url');
    await page.context().close();
  });

  it('is labelled, announces its answer, and axe finds no serious or critical violation', async () => {
    const page = await home(statics.url);
    await expect(page.locator('#check-result').getAttribute('aria-live')).resolves.toBe('polite');
    await expect(page.getByLabel('Endpoint URL').getAttribute('type')).resolves.toBe('url');
    await checkFromForm(page, `${sellerUrl}/paid`);
    const { violations } = await new AxeBuilder({ page }).analyze();
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id} ${v.help} ${v.nodes[0]?.html.slice(0, 120)}`)).toEqual([]);
    await page.context().close();
  });
});

describe('the server’s pages for browsers', () => {
  it('renders a live receipt as the site’s receipt page, whose verifier link says the signature is valid', async () => {
    const query = new URLSearchParams({ mode: 'dry-run', url: `${sellerUrl}/paid` });
    const answer = (await (await fetch(`${api}/v1/products/endpoint-spot-check?${query}`)).json()) as {
      receipt_id: string;
      receipt_url: string;
    };
    for (const width of [1280, 390]) {
      const page = await (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
      const res = await page.goto(answer.receipt_url);
      expect(res?.status()).toBe(200);
      await expect(page.locator('h1').textContent()).resolves.toBe(`Receipt ${answer.receipt_id}`);
      // The site's own frame: its navigation and search box, as on every built page.
      await expect(page.locator('header nav[aria-label="Site"]').count()).resolves.toBe(1);
      await expect(page.locator('form[role="search"]').count()).resolves.toBe(1);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const { violations } = await new AxeBuilder({ page }).analyze();
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${v.id} ${v.help} ${v.nodes[0]?.html.slice(0, 120)}`)).toEqual([]);
      await page.getByRole('link', { name: 'Verify this receipt in your browser' }).click();
      await page.locator('#result[data-ok="true"]').waitFor();
      await expect(page.locator('#result').textContent()).resolves.toContain('Valid');
      await page.context().close();
    }
  });

  it('gives browsers HTML 404 and error pages, with the code an API client gets as JSON', async () => {
    const page = await (await browser.newContext()).newPage();
    const cases: Array<[string, number, string]> = [
      ['/no-such-page', 404, 'Not found'],
      [`/v1/receipts/sc-${'a'.repeat(26)}`, 404, 'Not found'],
      ['/v1/products/endpoint-spot-check?url=nope', 400, 'Bad request'],
    ];
    for (const [path, status, title] of cases) {
      const res = await page.goto(`${api}${path}`);
      expect(res?.status(), path).toBe(status);
      expect(res?.headers()['content-type'], path).toMatch(/^text\/html/);
      await expect(page.locator('h1').textContent()).resolves.toBe(title);
      await expect(page.locator('header nav[aria-label="Site"]').count()).resolves.toBe(1);
      const json = await fetch(`${api}${path}`);
      expect(json.status, path).toBe(status);
      expect(((await json.json()) as { error: { code: string } }).error.code).toMatch(/^[a-z_]+$/);
    }
    await page.context().close();
  });
});
