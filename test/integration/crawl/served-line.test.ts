/**
 * `npm run crawl` names the URL its run is served at only when a server has the data folder open (its journal's
 * lock held by a live process); otherwise it says how to serve it. One listed endpoint on loopback, refused by the
 * SSRF gate (no PROBE_ALLOW_CIDRS), so the crawl touches no network.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataPaths } from '../../../io/data-paths.ts';
import { acquireLock } from '../../../io/receipts/_journal-lock.ts';
import { runCli } from '../../helpers/cli.ts';

const BASE_URL = 'http://127.0.0.1:8402';
let dataDir: string;
let listings: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sc-crawl-served-'));
  listings = join(dataDir, 'listings.json');
  await writeFile(listings, JSON.stringify([{ url: 'http://127.0.0.1:9/item', source: 'test' }]));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const crawl = () => runCli('../crawl/main.ts', ['--source', `file:${listings}`], dataDir, { BASE_URL });

describe('the run line of npm run crawl', () => {
  it('says how to serve the run when no server uses the data folder', { timeout: 120_000 }, async () => {
    const run = await crawl();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/published run \S+: 1 endpoints/);
    expect(run.stdout).toContain(
      `no server uses this DATA_DIR now: \`npm start\` with DATA_DIR=${dataDir} serves it`,
    );
    expect(run.stdout).not.toContain(BASE_URL);
  });

  it('names where it is served while a server holds the data folder', { timeout: 120_000 }, async () => {
    // The lock a server's journal takes on its folder (this test process stands for the server).
    await mkdir(dataPaths(dataDir).journal, { recursive: true });
    const release = await acquireLock(dataPaths(dataDir).journal);
    try {
      const run = await crawl();
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`served by the server on this DATA_DIR at ${BASE_URL}/v1/skips.json`);
    } finally {
      await release();
    }
  });
});
