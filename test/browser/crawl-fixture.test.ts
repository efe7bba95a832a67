/**
 * The volume fixture of the site tests (`test/fixtures/crawl-run.ts`) writes what the crawl writes: every file of a
 * run it publishes has the members, at every depth, of the same file from a real crawl of the sandbox fleet, and no
 * other. If the crawl's format changes and the fixture does not follow (or the other way round), this fails.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCrawlFixture } from '../fixtures/crawl-run.ts';
import { crawlSandboxIn, SITE_BASE_URL } from '../helpers/site.ts';

/** Members keyed by data (source names), not by the format: their keys are not compared. */
const KEYED_BY_DATA = new Set(['sources', 'lists', 'listed_in']);
/** Members only some sellers' answers bring (the example query of a seller that wants one, a free trial's count). */
const SELLER_DEPENDENT = ['.example_query', '.example_body', '.free_trial_remaining'];
const FILES = [
  'run.json',
  'summary.json',
  'stats.json',
  'saves.json',
  'skips/1.json',
  'rules.json',
  'listings.json',
];

let crawlDir: string;
let fixtureDir: string;
let crawlRun: string;
let fixtureRun: string;
beforeAll(async () => {
  crawlDir = await mkdtemp(join(tmpdir(), 'sc-format-crawl-'));
  fixtureDir = await mkdtemp(join(tmpdir(), 'sc-format-fixture-'));
  crawlRun = (await crawlSandboxIn(crawlDir)).runDir;
  fixtureRun = (
    await writeCrawlFixture({
      dataDir: fixtureDir,
      baseUrl: SITE_BASE_URL,
      finishedAt: new Date(),
      endpoints: 200,
    })
  ).runDir;
}, 120_000);
afterAll(async () => {
  await rm(crawlDir, { recursive: true, force: true });
  await rm(fixtureDir, { recursive: true, force: true });
});

describe('the site tests volume fixture', () => {
  it('publishes the same files as a crawl of the sandbox fleet', async () => {
    // plan.json and probes.ndjson are the crawl's own journal, which no reader opens (docs/data-files.md).
    const list = async (dir: string) =>
      [...(await readdir(dir)), ...(await readdir(join(dir, 'skips')))]
        .filter((name) => name !== 'plan.json' && name !== 'probes.ndjson')
        .sort();
    expect(await list(fixtureRun)).toEqual(await list(crawlRun));
  });

  for (const file of FILES) {
    it(`writes ${file} with the members the crawl writes`, async () => {
      const read = async (dir: string) => JSON.parse(await readFile(join(dir, file), 'utf8'));
      expectSameFormat(await read(fixtureRun), await read(crawlRun));
    });
  }

  it('writes receipts.ndjson lines and receipt files with the members the crawl writes', async () => {
    const lines = async (dir: string) =>
      (await readFile(join(dir, 'receipts.ndjson'), 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { id: string });
    const files = async (dir: string) => {
      const index = await lines(dir);
      const receipts = await Promise.all(
        index.map(async (line) =>
          JSON.parse(await readFile(join(dir, 'receipts', `${line.id}.json`), 'utf8')),
        ),
      );
      return { index, receipts };
    };
    const [fixture, crawl] = [await files(fixtureRun), await files(crawlRun)];
    expectSameFormat(fixture.index, crawl.index);
    expectSameFormat(fixture.receipts, crawl.receipts);
  });
});

type Shape = Map<string, Set<string>>;

/** Every member path of a JSON value (`$.skips[].reason_code`) with the types of the values found there. */
function shape(value: unknown, path = '$', out: Shape = new Map()): Shape {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  out.set(path, (out.get(path) ?? new Set()).add(type));
  if (Array.isArray(value)) for (const item of value) shape(item, `${path}[]`, out);
  else if (value !== null && typeof value === 'object') {
    const keyed = KEYED_BY_DATA.has(path.split('.').at(-1) ?? '');
    for (const [key, item] of Object.entries(value)) shape(item, `${path}.${keyed ? '<source>' : key}`, out);
  }
  return out;
}

/**
 * The fixture writes no member the crawl does not, every member the crawl writes but those that depend on what a
 * seller answered, and no value of another type where both wrote one (null aside: which members are null depends on
 * the data).
 */
function expectSameFormat(fixture: unknown, crawl: unknown): void {
  const f = shape(fixture);
  const c = shape(crawl);
  expect([...f.keys()].filter((path) => !c.has(path))).toEqual([]);
  const missing = [...c.keys()].filter(
    (path) => !f.has(path) && !SELLER_DEPENDENT.some((m) => path.includes(m)),
  );
  expect(missing).toEqual([]);
  const clashes = [...f].filter(([path, types]) => {
    const theirs = [...(c.get(path) ?? [])].filter((t) => t !== 'null');
    return theirs.length > 0 && [...types].some((t) => t !== 'null' && !theirs.includes(t));
  });
  expect(clashes.map(([path, types]) => `${path}: ${[...types]} vs ${[...(c.get(path) ?? [])]}`)).toEqual([]);
}
