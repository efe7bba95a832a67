/**
 * `npm run site:screenshots`: the main pages of the site of a sandbox crawl as PNGs in docs/screenshots/, for the
 * docs. Same parts as the browser tests: a real crawl of the sandbox fleet, `npm run build:site`, the real service,
 * Debian's chromium.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { launchChromium } from '../helpers/browser.ts';
import { startTestService } from '../helpers/service.ts';
import { crawledSandboxSite } from '../helpers/site.ts';

const OUT = resolve(import.meta.dirname, '../../docs/screenshots');
const site = await crawledSandboxSite();
const { dataDir } = site;
const t = await startTestService({}, {}, { dataDir });
const browser = await launchChromium();
try {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  await mkdir(OUT, { recursive: true });
  const receipt = site.index.find((line) => line.reason === 'price_mismatch');
  const paid = site.index.find((line) => line.verdict === 'pay');
  const shots: Array<[string, string]> = [
    ['home', '/'],
    ['skips', '/v1/skips/'],
    ['saves', '/saves/'],
    ['bazaar', '/bazaar/'],
    ['receipt', `/receipts/${receipt?.id}/`],
    ['stats', '/stats/'],
    ['badge', `/badge/${paid?.host}/`],
    ['rules', '/rules/'],
    ['verify', `/verify/?receipt=/receipts/${receipt?.id}.json`],
  ];
  for (const [name, path] of shots) {
    await page.goto(`${t.url}${path}`);
    if (name === 'verify') await page.locator('#result[data-ok="true"]').waitFor();
    await page.screenshot({ path: join(OUT, `${name}.png`) });
    console.log(`docs/screenshots/${name}.png  ${path}`);
  }
} finally {
  await browser.close();
  await t.stop();
  await rm(dataDir, { recursive: true, force: true });
}
