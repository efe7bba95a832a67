/**
 * The site build's reading of a run's receipt index (`site/lib/receipts.ts`, `site/lib/published.ts`): streamed line
 * by line, each receipt counted once across the crawl and the bazaar runs, and only a host's newest receipts kept.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteInput } from '../../../site/lib/published.ts';
import { receiptsByHost } from '../../../site/lib/receipts.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-site-receipts-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A receipt id whose 26 letters spell `n` in decimal (0 is a, 9 is j). */
const idOf = (n: number) =>
  `sc-${String(n)
    .padStart(26, '0')
    .replace(/\d/g, (d) => 'abcdefghij'[Number(d)] as string)}`;

function line(n: number, host: string, minute: number) {
  return JSON.stringify({
    id: idOf(n),
    short_id: String(n),
    url: `https://${host}/x${n}`,
    host,
    method: 'GET',
    issued_at: new Date(Date.UTC(2026, 10, 24, 0, minute)).toISOString(),
    verdict: 'pay',
    reason: 'price_ok',
  });
}

async function run(name: string, lines: string[]): Promise<{ runId: string; dir: string }> {
  const runDir = join(dir, name);
  await mkdir(runDir, { recursive: true });
  await writeFile(join(runDir, 'receipts.ndjson'), `${lines.join('\n')}\n`);
  return { runId: name, dir: runDir };
}

function input(crawlRun: SiteInput['crawlRun'], bazaarRun: SiteInput['bazaarRun']): SiteInput {
  return {
    dataDir: dir,
    baseUrl: 'https://spotcheck.example',
    builtAt: new Date().toISOString(),
    crawlRun,
    bazaarRun,
  };
}

describe('receiptsByHost', () => {
  it('counts every receipt of a host once and keeps only its newest, newest first', async () => {
    // 12 receipts of a.example in shuffled time order (more than twice what is kept, so the list is cut on the way).
    const minutes = [5, 11, 0, 7, 3, 9, 1, 10, 2, 8, 4, 6];
    const crawl = await run('crawl', [
      ...minutes.map((m, i) => line(i, 'a.example', m)),
      line(100, 'b.example', 1),
    ]);
    // The bazaar check repeats one crawl receipt and adds one of its own.
    const bazaar = await run('bazaar', [line(1, 'a.example', 11), line(200, 'b.example', 30)]);
    const hosts = await receiptsByHost(input(crawl, bazaar), 3);
    const a = hosts.get('a.example');
    expect(a?.endpoints).toBe(12);
    expect(a?.newest.map((r) => r.issued_at.slice(11, 16))).toEqual(['00:11', '00:10', '00:09']);
    expect(a?.newest[0]).toEqual({
      id: idOf(1),
      url: 'https://a.example/x1',
      issued_at: expect.any(String),
      runDir: crawl.dir,
    });
    const b = hosts.get('b.example');
    expect(b?.endpoints).toBe(2);
    expect(b?.newest.map((r) => [r.id, r.runDir])).toEqual([
      [idOf(200), bazaar.dir],
      [idOf(100), crawl.dir],
    ]);
  });

  it('stops the build on a line that is not a receipt index line, naming the file and line', async () => {
    const bad = await run('bad', [
      line(1, 'a.example', 1),
      JSON.stringify({ id: 'nope', host: 'a.example' }),
    ]);
    await expect(receiptsByHost(input(bad, null), 50)).rejects.toThrow(/bad\/receipts\.ndjson:2: id/);
  });
});
