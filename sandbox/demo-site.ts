/**
 * The site part of `npm run demo`: `npm run build:site` run as the maintainer runs it, in its own
 * process, against the running service's DATA_DIR right after the crawl; the service serves the new build from
 * the same origin at once, without a restart. Returns the lines to print and the pages to open.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../api/config.ts';

const ROOT = join(import.meta.dirname, '..');

/** Builds the site, checks the service answers its home page, and names a receipt and a badge to open. */
export async function buildDemoSite(config: Config, url: string, host: string) {
  const started = performance.now();
  const { stdout } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsx'), ['site/build.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: config.dataDir,
      BASE_URL: config.baseUrl,
      ASTRO_TELEMETRY_DISABLED: '1',
    },
    maxBuffer: 16 * 1024 * 1024,
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const home = await fetch(`${url}/`);
  if (home.status !== 200) throw new Error(`the built site's home page answered HTTP ${home.status}`);
  const page = (await (await fetch(`${url}/v1/skips.json`)).json()) as {
    skips: Array<{ permalink: string }>;
  };
  const receipt = /\/v1\/receipts\/(\S+)$/.exec(page.skips[0]?.permalink ?? '')?.[1];
  if (receipt === undefined) throw new Error('the skip listing names no receipt');
  const built = /: (\d+) pages and (\d+) receipt pages/.exec(stdout);
  return {
    lines: [
      `      npm run build:site in ${seconds} s (its own process, beside the running service): ${built?.[1] ?? '?'} pages`,
      `      and ${built?.[2] ?? '?'} receipt pages, served from ${url} at once, without a restart`,
    ],
    links: [
      ['site: home', `${url}/`],
      ['site: skips', `${url}/v1/skips/`],
      ['site: saves', `${url}/saves/`],
      ['site: bazaar', `${url}/bazaar/`],
      ['site: statistics', `${url}/stats/`],
      ['site: rules', `${url}/rules/`],
      ['site: a receipt', `${url}/receipts/${receipt}/`],
      ['site: a badge', `${url}/badge/${host}/  (image: ${url}/badge/${host}.svg)`],
      ['site: verifier', `${url}/verify/?receipt=${encodeURIComponent(`/receipts/${receipt}.json`)}`],
    ] as Array<[string, string]>,
  };
}
