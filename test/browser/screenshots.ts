/**
 * `npm run site:screenshots`: the main pages of the showcase site (`test/helpers/showcase-site.ts`: a real crawl of
 * the sandbox fleet after two earlier crawl runs and a known-answer run) as PNGs in docs/screenshots/, at 1280 and
 * 390 px, for docs/site.md. Same parts as the browser tests: `npm run build:site`, the real service, Debian's
 * chromium. `SHOWCASE_DATA_DIR=<dir>` reuses a DATA_DIR built before (kept) instead of building a new one.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { endpointKeyOfUrl, endpointPagePath } from '../../core/endpoint-paths.ts';
import { launchChromium } from '../helpers/browser.ts';
import { startTestService } from '../helpers/service.ts';
import { SHOWCASE_URL, showcaseSite } from '../helpers/showcase-site.ts';

const OUT = resolve(import.meta.dirname, '../../docs/screenshots');
const WIDTHS = [1280, 390] as const;

const kept = process.env.SHOWCASE_DATA_DIR;
const dataDir = kept ?? (await showcaseSite()).dataDir;
const t = await startTestService({}, {}, { dataDir });
const browser = await launchChromium();
try {
  await mkdir(OUT, { recursive: true });
  const skip = await firstSkipWithReceipt(t.url);
  const shots: Array<[string, string]> = [
    ['home', '/'],
    ['endpoint', endpointPagePath(endpointKeyOfUrl(SHOWCASE_URL, 'GET') as string)],
    ['skips', '/v1/skips/'],
    ['receipt', `/receipts/${skip}/`],
    ['search', '/search/?q=seller-3'],
  ];
  for (const width of WIDTHS) {
    const context = await browser.newContext({ viewport: { width, height: width > 800 ? 900 : 844 } });
    const page = await context.newPage();
    for (const [name, path] of shots) {
      await page.goto(`${t.url}${path}`);
      if (name === 'search') await page.locator('#search-results[data-complete="true"] a').first().waitFor();
      const file = join(OUT, `${name}-${width}.png`);
      await shoot(page, file, width);
      console.log(`docs/screenshots/${name}-${width}.png  ${path}`);
    }
    await context.close();
  }
} finally {
  await browser.close();
  await t.stop({ keepData: kept !== undefined });
  if (kept === undefined) await rm(dataDir, { recursive: true, force: true });
}

/** The top of the page (two screens at most on a phone), then squeezed to 64 colours when `pngquant` is there. */
async function shoot(page: Page, file: string, width: number): Promise<void> {
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const clip = { x: 0, y: 0, width, height: Math.min(height, width > 800 ? 1100 : 1400) };
  await page.screenshot({ path: file, clip, fullPage: true });
  await promisify(execFile)('pngquant', ['--force', '--skip-if-larger', '--ext', '.png', '64', file]).catch(
    () => {},
  );
}

/** The id of the first skip of the listing, read from the skips JSON the site serves. */
async function firstSkipWithReceipt(base: string): Promise<string> {
  const page = (await (await fetch(`${base}/v1/skips.json`)).json()) as {
    skips: Array<{ permalink: string }>;
  };
  const id = page.skips[0]?.permalink.split('/').at(-1);
  if (id === undefined) throw new Error('the showcase crawl has no skip');
  return id;
}
