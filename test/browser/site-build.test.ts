/**
 * `npm run build:site` as a maintainer runs it: two builds at once both succeed and `DATA_DIR/site`
 * always names a complete build; and every receipt a published save refers to has its page and raw file, also once
 * the earlier run it came from has been deleted (docs/site.md "Which receipts have a page").
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../verify/verify.ts';
import { writeCrawlFixture } from '../fixtures/crawl-run.ts';
import { buildSiteIn, SITE_BASE_URL } from '../helpers/site.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const HOUR = 3_600_000;

type Save = { run_id: string; receipt: { id: string } };

let dataDir: string;
let earlier: { runId: string; runDir: string };
let saves: Save[];
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sc-site-build-'));
  const common = { dataDir, baseUrl: SITE_BASE_URL, endpoints: 200 };
  earlier = await writeCrawlFixture({
    ...common,
    finishedAt: new Date(Date.now() - 24 * HOUR),
    seed: 1,
    first: 1000,
  });
  const latest = await writeCrawlFixture({ ...common, finishedAt: new Date(), seed: 2 });
  saves = JSON.parse(await readFile(join(latest.runDir, 'saves.json'), 'utf8')).saves;
}, 120_000);
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/** The files a complete build has, whatever it was built from. */
async function missingFrom(dir: string): Promise<string[]> {
  const wanted = ['index.html', '_headers', 'v1/skips.json', 'v1/skips/index.html', '.well-known/jwks.json'];
  wanted.push(...saves.map((s) => `receipts/${s.receipt.id}/index.html`));
  return wanted.filter((file) => !existsSync(join(dir, file)));
}

describe('npm run build:site', () => {
  it('runs twice at once: both succeed, and the served folder is complete whenever it is looked at', async () => {
    const hadAstroDir = existsSync(join(ROOT, '.astro'));
    let building = true;
    const seen: string[] = [];
    const watch = (async () => {
      while (building) {
        const dir = await realpath(join(dataDir, 'site')).catch(() => null);
        if (dir !== null) for (const file of await missingFrom(dir)) seen.push(`${dir}: ${file}`);
        await new Promise((done) => setTimeout(done, 20));
      }
    })();
    const outputs = await Promise.all([buildSiteIn(dataDir), buildSiteIn(dataDir)]).finally(() => {
      building = false;
    });
    await watch;
    for (const out of outputs) expect(out).toMatch(/site built from \S+: \d+ pages and \d+ receipt pages/);
    expect(seen).toEqual([]);
    expect(await missingFrom(await realpath(join(dataDir, 'site')))).toEqual([]);
    // Each build had its own scratch folders, all removed; nothing was written into the repository. What stays is
    // the two builds kept and the history cache the builds share (site/lib/history-cache.ts).
    const left = (await readdir(join(dataDir, 'site-builds'))).filter((name) => name !== '.history-cache');
    expect(left.filter((name) => name.startsWith('.'))).toEqual([]);
    expect(left).toHaveLength(2);
    if (!hadAstroDir) expect(existsSync(join(ROOT, '.astro'))).toBe(false);
  }, 240_000);

  it('gives a page to every receipt a save refers to, from an earlier run too, even once that run is deleted', async () => {
    expect(saves.filter((s) => s.run_id === earlier.runId).length).toBeGreaterThan(0);
    const jwks = JSON.parse(await readFile(join(dataDir, 'site', '.well-known', 'jwks.json'), 'utf8'));
    const earlierFile = (id: string) => readFile(join(earlier.runDir, 'receipts', `${id}.json`), 'utf8');
    const kept = saves.find((s) => s.run_id === earlier.runId) as Save;
    const raw = await readFile(join(dataDir, 'site', 'receipts', `${kept.receipt.id}.json`), 'utf8');
    expect(raw).toBe(await earlierFile(kept.receipt.id));

    await rm(earlier.runDir, { recursive: true });
    await buildSiteIn(dataDir);
    const site = await realpath(join(dataDir, 'site'));
    expect(await missingFrom(site)).toEqual([]);
    for (const save of saves) {
      const receipt = JSON.parse(await readFile(join(site, 'receipts', `${save.receipt.id}.json`), 'utf8'));
      expect(receipt).toEqual(save.receipt);
      expect(await verifyReceipt(receipt, jwks)).toMatchObject({ ok: true });
      const page = await readFile(join(site, 'receipts', save.receipt.id, 'index.html'), 'utf8');
      expect(page).toContain(`Receipt <code>${save.receipt.id}</code>`);
    }
  }, 240_000);
});
