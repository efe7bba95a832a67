/**
 * A rebuild rewrites only the endpoint, host and task pages whose bytes changed (docs/site.md "Rebuilding after a
 * crawl", `site/lib/page-writer.ts`): two crawls written by the crawl's own code, their pages written three times
 * into three build folders, each after the one before, as `npm run build:site` does.
 */
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
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

/** Every file of a build folder but its hashes, by path, with its bytes. */
async function tree(build: string): Promise<Map<string, string>> {
  const root = join(dir, build);
  const out = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && entry.name !== '.page-hashes.json') {
      const full = join(entry.parentPath, entry.name);
      out.set(full.slice(root.length + 1), await readFile(full, 'utf8'));
    }
  return out;
}

/** Moves the page folders of `build` into a folder of their own, as `site/build.ts` does with an unkept build. */
async function recycle(build: string): Promise<string> {
  const to = join(dir, `${build}.recycled`);
  await mkdir(to);
  for (const top of ['endpoints', 'hosts', 'tasks'])
    await rename(join(dir, build, top), join(to, top)).catch(() => undefined);
  return to;
}

/** The history after a crawl that gave every endpoint but the last a new check (the last is gone). */
async function crawled(days: number): Promise<SiteHistory> {
  const h = await history(days);
  const gone = [...h.endpoints.values()].at(-1) as { key: string; host: string };
  h.endpoints.delete(gone.key);
  h.hosts.set(
    gone.host,
    (h.hosts.get(gone.host) ?? []).filter((k) => k !== gone.key),
  );
  for (const endpoint of h.endpoints.values()) {
    const last = endpoint.checks.at(-1);
    if (last !== undefined)
      endpoint.checks.push({
        ...last,
        pay_to: '0x00000000000000000000000000000000000000bb',
        receipt_id: `${last.receipt_id}x`,
      });
  }
  return h;
}

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

  it('reuses the files of an unkept build for the pages that changed: the same bytes, no file shared written through', async () => {
    // p and q: two full builds; r: linked from q, as a rebuild with no new run is (its files are q's).
    const p = writeEndpointPages(await history(0), join(dir, 'p'), SHELL, BASE_URL);
    writeEndpointPages(await history(0), join(dir, 'q'), SHELL, BASE_URL);
    writeEndpointPages(await history(0), join(dir, 'r'), SHELL, BASE_URL, join(dir, 'q'));
    const h = await crawled(1);
    const key = [...h.endpoints.keys()][0] as string;
    const page = `endpoints/${key}/index.html`;
    const pInode = await inode('p', page);
    const qBytes = await tree('q');
    writeEndpointPages(await crawled(1), join(dir, 'fresh'), SHELL, BASE_URL);
    // s replaces p beside r (served): p's files are its own (one link each), so they are written over.
    const s = writeEndpointPages(
      await crawled(1),
      join(dir, 's'),
      SHELL,
      BASE_URL,
      join(dir, 'r'),
      await recycle('p'),
    );
    expect(await tree('s')).toEqual(await tree('fresh'));
    expect(await inode('s', page)).toBe(pInode);
    expect(s.files.written).toBe(p.files.written - 2);
    // t replaces q, whose files r shares: each is replaced by a new file, and r keeps its bytes.
    const t = writeEndpointPages(
      await crawled(1),
      join(dir, 't'),
      SHELL,
      BASE_URL,
      join(dir, 'r'),
      await recycle('q'),
    );
    expect(await tree('t')).toEqual(await tree('fresh'));
    expect(await inode('t', page)).not.toBe(await inode('r', page));
    expect(await tree('r')).toEqual(qBytes);
    expect(t.files.written).toBe(s.files.written);
    // What the recycled folders held and no page took is gone with them.
    expect(await readdir(join(dir, 'p.recycled'))).toEqual([]);
  });
});
