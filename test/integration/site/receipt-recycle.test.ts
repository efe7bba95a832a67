/**
 * A rebuild's receipt pages reuse the folders and page files of the build it replaces (`site/lib/receipt-pages.ts`,
 * `site/build.ts`): the same files and bytes as written afresh, the raw files linked to the run's own, and the run
 * folders' files never written through.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FALLBACK_SHELL } from '../../../core/page-shell.ts';
import type { SiteInput } from '../../../site/lib/published.ts';
import { writeReceiptPages } from '../../../site/lib/receipt-pages.ts';
import { type FixtureRun, writeCrawlFixture } from '../../fixtures/crawl-run.ts';

const BASE_URL = 'https://spotcheck.test';
let dir: string;
const runs: FixtureRun[] = [];

const inputOf = (run: FixtureRun): SiteInput => ({
  dataDir: dir,
  baseUrl: BASE_URL,
  builtAt: new Date(Date.UTC(2026, 5, 10)).toISOString(),
  crawlRun: { runId: run.runId, dir: run.runDir },
  bazaarRun: null,
});

/** Every file under `root`, by path, with its bytes. */
async function tree(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const full = join(entry.parentPath, entry.name);
      out.set(full.slice(root.length + 1), await readFile(full, 'utf8'));
    }
  return out;
}

const inodes = async (root: string, name: string) =>
  new Set(
    await Promise.all(
      (await readdir(root, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile() && e.name === name)
        .map(async (e) => (await stat(join(e.parentPath, e.name))).ino),
    ),
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-site-receipt-recycle-'));
  for (const [i, day] of [1, 8].entries())
    runs.push(
      await writeCrawlFixture({
        dataDir: dir,
        baseUrl: BASE_URL,
        endpoints: 30 - i * 10,
        finishedAt: new Date(Date.UTC(2026, 5, day)),
        seed: i + 1,
      }),
    );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('receipt pages over a recycled build', () => {
  it('reuses its folders and pages, writes the bytes of a fresh build, and leaves the run files as they were', async () => {
    const [older, newer] = runs as [FixtureRun, FixtureRun];
    const olderFiles = await tree(join(older.runDir, 'receipts'));
    expect(await writeReceiptPages(inputOf(older), join(dir, 'a'), Promise.resolve(FALLBACK_SHELL))).toBe(30);
    const pages = await inodes(join(dir, 'a'), 'index.html');
    expect(await writeReceiptPages(inputOf(newer), join(dir, 'fresh'), Promise.resolve(FALLBACK_SHELL))).toBe(
      20,
    );
    const n = await writeReceiptPages(
      inputOf(newer),
      join(dir, 'b'),
      Promise.resolve(FALLBACK_SHELL),
      join(dir, 'a'),
    );
    expect(n).toBe(20);
    expect(await tree(join(dir, 'b'))).toEqual(await tree(join(dir, 'fresh')));
    // Every page is a file of the build it replaced, written over; the ten left over are gone with the folder.
    expect([...(await inodes(join(dir, 'b'), 'index.html'))].every((ino) => pages.has(ino))).toBe(true);
    await expect(stat(join(dir, 'a'))).rejects.toThrow();
    // The raw files are the run's own files, linked; the older run's files are untouched.
    const id = (await readdir(join(newer.runDir, 'receipts')))[0] as string;
    expect((await stat(join(dir, 'b', id))).ino).toBe((await stat(join(newer.runDir, 'receipts', id))).ino);
    expect(await tree(join(older.runDir, 'receipts'))).toEqual(olderFiles);
  });
});
