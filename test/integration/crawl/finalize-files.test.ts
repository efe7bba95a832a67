/**
 * The run's two largest data files are written a chunk at a time (`crawl/finalize.ts`), from the facts kept as index
 * lines: their bytes must be those of the whole-file text they replaced (one `JSON.stringify` line per probe, then the
 * carried lines; `listings.json` pretty-printed with two spaces), carried endpoints included.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCrawlFixture } from '../../fixtures/crawl-run.ts';

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sc-finalize-files-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const read = (runDir: string, name: string) => readFile(join(runDir, name), 'utf8');

describe('finalizeRun files', () => {
  it('writes receipts.ndjson and listings.json with the bytes of the whole-file text, carried endpoints included', async () => {
    const base = { dataDir, baseUrl: 'https://spotcheck.example', endpoints: 180, hosts: 7 };
    const first = await writeCrawlFixture({ ...base, finishedAt: new Date('2026-11-20T12:00:00Z') });
    // A second run where one source fails: the endpoints only it listed are carried, with their listings.
    const second = await writeCrawlFixture({
      ...base,
      finishedAt: new Date('2026-11-21T12:00:00Z'),
      failedSources: ['payai'],
      seed: 2,
    });
    for (const run of [first, second]) {
      const index = await read(run.runDir, 'receipts.ndjson');
      const lines = index.split('\n').slice(0, -1);
      expect(index.endsWith('\n')).toBe(true);
      expect(lines.slice(0, run.facts.length)).toEqual(run.facts.map((f) => JSON.stringify(f)));
      expect(lines.map((line) => JSON.stringify(JSON.parse(line)))).toEqual(lines);
      const listings = await read(run.runDir, 'listings.json');
      expect(listings).toBe(`${JSON.stringify(JSON.parse(listings), null, 2)}\n`);
    }
    const carried = (await read(second.runDir, 'receipts.ndjson')).split('\n').slice(second.facts.length, -1);
    expect(carried.length).toBeGreaterThan(0);
    expect(carried.every((line) => JSON.parse(line).carried_from === first.runId)).toBe(true);
    const records = JSON.parse(await read(second.runDir, 'listings.json')) as unknown[];
    expect(records.length).toBeGreaterThan(second.facts.length - 1);
  });

  it('writes an empty listings.json as [] and an empty index when no endpoint was listed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sc-finalize-empty-'));
    try {
      const run = await writeCrawlFixture({
        dataDir: dir,
        baseUrl: 'https://spotcheck.example',
        endpoints: 0,
        finishedAt: new Date('2026-11-20T12:00:00Z'),
      });
      expect(await read(run.runDir, 'listings.json')).toBe('[]\n');
      expect(await read(run.runDir, 'receipts.ndjson')).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
