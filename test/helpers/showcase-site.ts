/**
 * A site with every template filled, for the accessibility test (`test/browser/site-a11y.test.ts`) and the
 * screenshots (`npm run site:screenshots`): two earlier crawl runs written by the crawl's own code
 * (`test/fixtures/crawl-run.ts`; the later one sees a new wallet on every third endpoint, so an endpoint page has a
 * wallet change on its timeline), a known-answer run (a task page, alternatives), then a real crawl of the sandbox
 * fleet and a bazaar check as the published run, all built with `npm run build:site`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endpointKeyOfUrl } from '../../core/endpoint-paths.ts';
import { type FixtureRun, writeCrawlFixture } from '../fixtures/crawl-run.ts';
import { writeKnownAnswerRun } from '../fixtures/known-answer-run.ts';
import { buildSiteIn, crawlSandboxIn, type SandboxSite, SITE_BASE_URL } from './site.ts';

const DAY = 86_400_000;
/** Endpoint 3 of the fixture runs: listed with a price and no wallet, so it stays `pay` when its wallet changes. */
export const SHOWCASE_URL = 'https://seller-3.example/api/item-3';
export const SHOWCASE_TASK = 'weather-now';

export type ShowcaseSite = SandboxSite & {
  /** The earlier fixture runs, oldest first. */
  runs: FixtureRun[];
  /** The key of the endpoint whose wallet changed (its page is `/endpoints/<key>/`). */
  changedKey: string;
};

/** Builds the showcase site under a new DATA_DIR (about 30 s); the caller removes `dataDir`. */
export async function showcaseSite(): Promise<ShowcaseSite> {
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-showcase-'));
  const now = Date.now();
  const runs: FixtureRun[] = [];
  for (const [i, days] of [20, 6].entries())
    runs.push(
      await writeCrawlFixture({
        dataDir,
        baseUrl: SITE_BASE_URL,
        endpoints: 60,
        finishedAt: new Date(now - days * DAY),
        seed: i + 1,
        walletShift: i === 1 ? 7 : 0,
      }),
    );
  await writeKnownAnswers(dataDir);
  const crawled = await crawlSandboxIn(dataDir);
  await buildSiteIn(dataDir);
  return { ...crawled, runs, changedKey: endpointKeyOfUrl(SHOWCASE_URL, 'GET') as string };
}

/** A known-answer run: one task, two services. */
function writeKnownAnswers(dir: string): Promise<void> {
  const other = 'https://seller-13.example/api/item-13';
  const task = {
    name: SHOWCASE_TASK,
    title: 'Current weather',
    description: 'The weather now at a place.',
    request: { method: 'GET' },
    candidates: [SHOWCASE_URL, other],
  };
  const call = (endpoint_url: string, known_answer: string | null) => ({
    endpoint_url,
    task: SHOWCASE_TASK,
    known_answer,
    called_at: new Date().toISOString(),
  });
  const calls = [
    ...['pass', 'pass', 'pass', 'fail'].map((k) => call(SHOWCASE_URL, k)),
    ...['pass', 'fail'].map((k) => call(other, k)),
  ];
  return writeKnownAnswerRun(dir, { runId: '20260101T000000Z-abcd', tasks: [task], calls });
}
