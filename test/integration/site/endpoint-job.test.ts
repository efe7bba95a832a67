/**
 * The endpoint, host and task pages written by their own process (`site/lib/endpoint-build.ts`, which
 * `npm run build:site` starts beside the receipt pages) are the bytes the same pass writes in-process, its search
 * records are the same records in the same order, and a second job links every unchanged page from the first; the
 * history keeps in memory only the permalinks a page could not write from the build's own base URL.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FALLBACK_SHELL, parseShell } from '../../../core/page-shell.ts';
import { readRecords, startEndpointJob } from '../../../site/lib/endpoint-build.ts';
import { readSiteHistory } from '../../../site/lib/endpoint-history.ts';
import { writeEndpointPages } from '../../../site/lib/endpoint-pages.ts';
import { publishedRun, type SiteInput } from '../../../site/lib/published.ts';
import { writeCrawlFixture } from '../../fixtures/crawl-run.ts';

const BASE_URL = 'https://spotcheck.test';
const SHELL_HTML = FALLBACK_SHELL;
const DAY = 86_400_000;

let dir: string;
let input: SiteInput;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-site-endpoint-job-'));
  for (const [i, day] of [1, 8].entries())
    await writeCrawlFixture({
      dataDir: dir,
      baseUrl: BASE_URL,
      endpoints: 40,
      finishedAt: new Date(Date.UTC(2026, 5, day)),
      seed: i + 1,
    });
  input = {
    dataDir: dir,
    baseUrl: BASE_URL,
    builtAt: new Date(Date.UTC(2026, 5, 10) + DAY).toISOString(),
    crawlRun: await publishedRun(join(dir, 'crawl')),
    bazaarRun: null,
  };
  await writeFile(join(dir, 'shell.html'), SHELL_HTML);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function files(root: string): Promise<string[]> {
  return (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

describe('the endpoint pages process', () => {
  it('writes the bytes and records of the in-process pass, and links them on a second run', async () => {
    const here = writeEndpointPages(
      await readSiteHistory(input),
      join(dir, 'here'),
      parseShell(SHELL_HTML),
      BASE_URL,
    );
    const progress: string[] = [];
    const job = (out: string, previous: string | null, recordsFile: string) =>
      startEndpointJob({ input, out, shellFile: join(dir, 'shell.html'), previous, recordsFile }, (line) =>
        progress.push(line),
      ).result;
    const first = await job(join(dir, 'a'), null, join(dir, 'a.ndjson'));
    expect(first.files).toEqual(here.files);
    expect(first).toMatchObject({ endpoints: here.endpoints, hosts: here.hosts, tasks: here.tasks });
    expect(progress).toContain('history…');
    const names = await files(join(dir, 'here'));
    expect(await files(join(dir, 'a'))).toEqual(names);
    for (const name of names)
      expect(await readFile(join(dir, 'a', name), 'utf8')).toBe(
        await readFile(join(dir, 'here', name), 'utf8'),
      );
    expect(await readRecords(join(dir, 'a.ndjson'))).toEqual(here.records);
    const second = await job(join(dir, 'b'), join(dir, 'a'), join(dir, 'b.ndjson'));
    expect(second.files).toEqual({ written: 0, kept: first.files.written });
    const page = names.find((n) => n.startsWith('endpoints/')) as string;
    expect((await stat(join(dir, 'b', page))).ino).toBe((await stat(join(dir, 'a', page))).ino);
  });

  it('keeps in memory only the permalinks that differ from the build’s own', async () => {
    expect((await readSiteHistory(input)).permalinks.size).toBe(0);
    const mirror = await readSiteHistory({ ...input, baseUrl: 'https://mirror.test' });
    // The first crawl's receipts have no page in this build: their links keep the issuing server's permalink.
    expect(mirror.permalinks.size).toBe(40);
    for (const [id, url] of mirror.permalinks) expect(url).toBe(`${BASE_URL}/v1/receipts/${id}`);
  });
});
