/**
 * A rebuild rewrites only the endpoint, host and task pages whose bytes changed (docs/site.md "Rebuilding after a
 * crawl", `site/lib/page-writer.ts`): two crawls written by the crawl's own code, their pages written three times
 * into three build folders, each after the one before, as `npm run build:site` does.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSiteHistory, type SiteHistory } from '../../../site/lib/endpoint-history.ts';
import { writeEndpointPages } from '../../../site/lib/endpoint-pages.ts';
import { publishedRun } from '../../../site/lib/published.ts';
import { writeCrawlFixture } from '../../fixtures/crawl-run.ts';

const BASE_URL = 'https://spotcheck.test';
const SHELL = ['<title>', 'title', '</title><meta content="', 'description', '"><main>', 'body', '</main>'];
const DAY = 86_400_000;

let dir: string;

/** The history as a build reads it, `days` after the newest crawl (the pages must not depend on when). */
async function history(days: number): Promise<SiteHistory> {
  const crawlRun = await publishedRun(join(dir, 'crawl'));
  return readSiteHistory({
    dataDir: dir,
    baseUrl: BASE_URL,
    builtAt: new Date(Date.UTC(2026, 5, 10) + days * DAY).toISOString(),
    crawlRun,
    bazaarRun: null,
  });
}

const inode = async (build: string, path: string) => (await stat(join(dir, build, path))).ino;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-site-incremental-'));
  for (const [i, day] of [1, 8].entries())
    await writeCrawlFixture({
      dataDir: dir,
      baseUrl: BASE_URL,
      endpoints: 30,
      finishedAt: new Date(Date.UTC(2026, 5, day)),
      seed: i + 1,
    });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('an incremental rebuild of the endpoint pages', () => {
  it('rewrites no page when nothing changed, even days later, and links them from the build before', async () => {
    const first = writeEndpointPages(await history(0), join(dir, 'a'), SHELL, BASE_URL);
    expect(first.files.kept).toBe(0);
    expect(first.files.written).toBe(first.endpoints * 2 + first.hosts * 2 + first.tasks);
    const second = writeEndpointPages(await history(3), join(dir, 'b'), SHELL, BASE_URL, join(dir, 'a'));
    expect(second.files).toEqual({ written: 0, kept: first.files.written });
    const h = await history(3);
    const key = [...h.endpoints.keys()][0] as string;
    expect(await inode('b', `endpoints/${key}/index.html`)).toBe(
      await inode('a', `endpoints/${key}/index.html`),
    );
  });

  it('rewrites one changed endpoint’s page, its twin and its host’s, and leaves the served build as it was', async () => {
    const h = await history(4);
    const endpoint = [...h.endpoints.values()][5];
    if (endpoint === undefined) throw new Error('no endpoint');
    const last = endpoint.checks.at(-1);
    if (last === undefined) throw new Error('no check');
    // A newer check of this endpoint alone, as a crawl that saw its wallet change would add.
    endpoint.checks.push({
      ...last,
      at: new Date(Date.parse(last.at) - 60_000).toISOString(),
      pay_to: '0x00000000000000000000000000000000000000aa',
      receipt_id: 'sc-changed',
    });
    const before = await readFile(join(dir, 'b', 'endpoints', endpoint.key, 'index.html'), 'utf8');
    const third = writeEndpointPages(h, join(dir, 'c'), SHELL, BASE_URL, join(dir, 'b'));
    const others = [...h.endpoints.values()].filter((e) => e.host === endpoint.host).length;
    expect(others).toBeGreaterThan(0);
    expect(third.files.written).toBe(4);
    const page = `endpoints/${endpoint.key}/index.html`;
    expect(await readFile(join(dir, 'c', page), 'utf8')).toContain('sc-changed');
    expect(await inode('c', page)).not.toBe(await inode('b', page));
    expect(await inode('c', `hosts/${endpoint.host}/index.html`)).not.toBe(
      await inode('b', `hosts/${endpoint.host}/index.html`),
    );
    // The build served while this one was written still holds its own bytes.
    expect(await readFile(join(dir, 'b', page), 'utf8')).toBe(before);
    const untouched = [...h.endpoints.values()].find((e) => e.host !== endpoint.host) as { key: string };
    expect(await inode('c', `endpoints/${untouched.key}.json`)).toBe(
      await inode('b', `endpoints/${untouched.key}.json`),
    );
  });
});
