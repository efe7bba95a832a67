/**
 * The endpoint page of a catalog candidate lists the alternatives a skip of its check would (docs/api.md §2.1
 * `alternatives`): the same `alternativesOf` over the published known-answer run's calls, in the lookup's order,
 * linked to the other candidates' pages, in the page and its JSON twin.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alternativesOf } from '../../../core/alternatives.ts';
import { endpointKeyOfUrl, endpointPagePath } from '../../../core/endpoint-paths.ts';
import { readSiteHistory, type SiteHistory } from '../../../site/lib/endpoint-history.ts';
import { writeEndpointPages } from '../../../site/lib/endpoint-pages.ts';
import { writeKnownAnswerRun } from '../../fixtures/known-answer-run.ts';
import { paidCallAt } from '../../helpers/paid-calls.ts';

const BASE_URL = 'https://spotcheck.test';
const TASK = 'fx-rate';
const HOSTS = ['a', 'b', 'c', 'd', 'e'].map((h) => `${h}.example`);
const SHELL = ['<title>', 'title', '</title><meta content="', 'description', '"><main>', 'body', '</main>'];

let dir: string;
let history: SiteHistory;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-site-alternatives-'));
  const candidates = HOSTS.map((h) => `https://${h}/run`);
  // Prices 0.005 down to 0.001 and pass rates 1, 1, 1/2, 0, unchecked: a ranking that is neither by price nor by host.
  const answers = [['pass'], ['pass'], ['pass', 'fail'], ['fail'], [null]] as const;
  const calls: object[] = [];
  let n = 0;
  HOSTS.forEach((host, i) => {
    for (const known_answer of answers[i] ?? [])
      calls.push(
        paidCallAt(host, new Date(Date.UTC(2026, 10, 29, 0, ++n)), n, {
          price_atomic: String(5000 - i * 1000),
          known_answer,
          receipt_id: `sc-${host[0]}${n}`,
        }),
      );
  });
  await writeKnownAnswerRun(dir, {
    runId: '20261130T000000Z-abcd',
    tasks: [{ name: TASK, description: 'Rates.', request: { method: 'GET' }, candidates }],
    calls,
    publishedAt: '2026-11-30T00:00:00.000Z',
  });
  history = await readSiteHistory({
    dataDir: dir,
    baseUrl: BASE_URL,
    builtAt: '2026-11-30T12:00:00.000Z',
    crawlRun: null,
    bazaarRun: null,
  });
  writeEndpointPages(history, join(dir, 'site'), SHELL, BASE_URL);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const keyOf = (host: string) => endpointKeyOfUrl(`https://${host}/run`, 'GET') as string;

describe('the alternatives of a candidate', () => {
  it('are the check’s list, in the lookup’s order, in the JSON twin', async () => {
    expect(history.paidCalls).toHaveLength(6);
    const twin = JSON.parse(
      await readFile(join(dir, 'site', 'endpoints', `${keyOf('a.example')}.json`), 'utf8'),
    );
    const expected = alternativesOf(history.paidCalls, {
      task: TASK,
      maxPriceUsd: null,
      checkedUrl: 'https://a.example/run',
      baseUrl: BASE_URL,
    });
    expect(twin.alternatives).toEqual({ [TASK]: expected });
    // b (pass 1, cheaper than a), then c (1/2), then d (0); e has no checked answer; a is the page's own.
    expect(expected.map((a) => a.service_id)).toEqual(['b.example/run', 'c.example/run', 'd.example/run']);
    expect(expected[0]?.receipt_url).toBe(`${BASE_URL}/v1/receipts/sc-b2`);
  });

  it('are listed on the page, linked to their endpoint pages and receipts', async () => {
    const html = await readFile(join(dir, 'site', 'endpoints', keyOf('a.example'), 'index.html'), 'utf8');
    const section = html.slice(html.indexOf('id="alternatives"'));
    const items = [...section.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1] ?? '');
    expect(items).toHaveLength(3);
    expect(items[0]).toContain(`<a href="${endpointPagePath(keyOf('b.example'))}">b.example/run</a>`);
    expect(items[0]).toContain('pass rate 100 %');
    expect(items[0]).toContain(`href="${BASE_URL}/v1/receipts/sc-b2"`);
    expect(items[2]).toContain('d.example/run');
  });
});
