/**
 * The endpoint history reads each earlier run's receipt index from the build's cache when the index is the one it
 * was made from (`site/lib/history-cache.ts`): a rebuild after a crawl parses only the new run line by line, and
 * gathers the same history; an index that changed is read again.
 */
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSiteHistory } from '../../../site/lib/endpoint-history.ts';
import { publishedRun, type SiteInput } from '../../../site/lib/published.ts';
import { type FixtureRun, writeCrawlFixture } from '../../fixtures/crawl-run.ts';

const BASE_URL = 'https://spotcheck.test';
let dir: string;
let input: SiteInput;
let older: FixtureRun;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-site-history-cache-'));
  older = await writeCrawlFixture({
    dataDir: dir,
    baseUrl: BASE_URL,
    endpoints: 30,
    finishedAt: new Date(Date.UTC(2026, 5, 1)),
  });
  await writeCrawlFixture({
    dataDir: dir,
    baseUrl: BASE_URL,
    endpoints: 30,
    finishedAt: new Date(Date.UTC(2026, 5, 8)),
    seed: 2,
    walletShift: 3,
  });
  input = {
    dataDir: dir,
    baseUrl: BASE_URL,
    builtAt: new Date(Date.UTC(2026, 5, 10)).toISOString(),
    crawlRun: await publishedRun(join(dir, 'crawl')),
    bazaarRun: null,
  };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the history cache', () => {
  it('reads an unchanged run from the cache, not its index, and reads a changed index again', async () => {
    const first = await readSiteHistory(input);
    expect(first.runs).toHaveLength(2);
    expect(await readdir(join(dir, 'site-builds', '.history-cache'))).toHaveLength(2);
    // The older run's index made unreadable, with its size and time kept: the cache answers for it.
    const index = join(older.runDir, 'receipts.ndjson');
    const { size, atime, mtime } = await stat(index);
    const original = await readFile(index);
    await writeFile(index, Buffer.alloc(size, 0x7b));
    await utimes(index, atime, mtime);
    expect(await readSiteHistory(input)).toEqual(first);
    // Another time on the index: it is read again (and fails, as it no longer parses).
    await utimes(index, atime, new Date(mtime.getTime() + 1000));
    await expect(readSiteHistory(input)).rejects.toThrow();
    await writeFile(index, original);
    expect(await readSiteHistory(input)).toEqual(first);
  });
});
