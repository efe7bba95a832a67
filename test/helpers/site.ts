/**
 * A published fixture run built into a site with the real command (`npm run build:site` in a child process,
 * as a maintainer runs it), for the browser tests and the screenshots.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type FixtureRun, writeCrawlFixture } from '../fixtures/crawl-run.ts';

const ROOT = resolve(import.meta.dirname, '../..');
export const FIXTURE_BASE_URL = 'http://127.0.0.1:8402';

/** Writes a fixture run of `endpoints` under a new DATA_DIR and builds the site there. */
export async function builtFixtureSite(endpoints: number): Promise<{ dataDir: string; run: FixtureRun }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-site-'));
  const run = await writeCrawlFixture({
    dataDir,
    baseUrl: FIXTURE_BASE_URL,
    finishedAt: new Date(),
    endpoints,
  });
  await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsx'), ['site/build.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, BASE_URL: FIXTURE_BASE_URL, ASTRO_TELEMETRY_DISABLED: '1' },
    maxBuffer: 16 * 1024 * 1024,
  });
  return { dataDir, run };
}
