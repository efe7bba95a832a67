/**
 * Sites built with the real command (`npm run build:site` in a child process, as a maintainer runs it) for the
 * browser tests and the screenshots: from a real crawl of the sandbox fleet, or, where a test needs volume (two
 * pages of skips), from a run of any size written by the crawl's own code (`test/fixtures/crawl-run.ts`).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { crawlSandbox } from '../../sandbox/demo-crawl.ts';
import { startDiscovery } from '../../sandbox/discovery.ts';
import { startSellers } from '../../sandbox/sellers/index.ts';
import { type FixtureRun, writeCrawlFixture } from '../fixtures/crawl-run.ts';

const ROOT = resolve(import.meta.dirname, '../..');
export const SITE_BASE_URL = 'http://127.0.0.1:8402';

/** `npm run build:site` for `dataDir` (with `baseUrl` as `BASE_URL`), in a child process; returns its output. */
export async function buildSiteIn(dataDir: string, baseUrl: string = SITE_BASE_URL): Promise<string> {
  const { stdout } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsx'), ['site/build.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, BASE_URL: baseUrl, ASTRO_TELEMETRY_DISABLED: '1' },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** A crawl run of `endpoints` (30 % skips) written by the crawl's code under a new DATA_DIR, built into a site. */
export async function builtFixtureSite(endpoints: number): Promise<{ dataDir: string; run: FixtureRun }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-site-'));
  const run = await writeCrawlFixture({ dataDir, baseUrl: SITE_BASE_URL, finishedAt: new Date(), endpoints });
  await buildSiteIn(dataDir);
  return { dataDir, run };
}

/** One line of a run's `receipts.ndjson`, as far as the tests read it. */
export type IndexedLine = { id: string; url: string; host: string; verdict: string; reason: string };

export type SandboxSite = {
  dataDir: string;
  runDir: string;
  kid: string;
  index: IndexedLine[];
  /** The signed receipt file of a crawl receipt, parsed. */
  receipt(id: string): Promise<Record<string, unknown>>;
};

/**
 * A real crawl of the sandbox fleet and a bazaar check (the crawl's code, the real prober with loopback allowed as
 * by PROBE_ALLOW_CIDRS, signed receipts), published under `dataDir` (not built). The fleet stops once crawled.
 */
export async function crawlSandboxIn(dataDir: string): Promise<SandboxSite> {
  const fleet = await startSellers();
  const discovery = await startDiscovery({ sellers: fleet.urls, payTo: fleet.payTo });
  try {
    const { crawl, kid } = await crawlSandbox(discovery, {
      dataDir,
      baseUrl: SITE_BASE_URL,
      allowCidrs: '127.0.0.0/8',
    });
    const runDir = join(dataDir, 'crawl', crawl.pointer.path);
    const index = (await readFile(join(runDir, 'receipts.ndjson'), 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as IndexedLine);
    const receipt = async (id: string) =>
      JSON.parse(await readFile(join(runDir, 'receipts', `${id}.json`), 'utf8')) as Record<string, unknown>;
    return { dataDir, runDir, kid, index, receipt };
  } finally {
    await discovery.close();
    await fleet.close();
  }
}
