/**
 * Target: a search answers in the browser in at most 100 ms for a 50,000-endpoint index (docs/site.md "Search").
 * The index is built by the site's own `writeSearchIndex` (`site/lib/search-index.ts`) from BENCH_SEARCH_ENDPOINTS
 * (default 50,000) endpoint records shaped as `site/lib/endpoint-pages.ts` writes them (URL, host, verdict, reason,
 * listing source, task and service), with their host, service and task records; no full site build. Its two bundles
 * are served as static files on loopback (`test/helpers/static-server.ts`) beside a bare page running the search
 * page's own script (read from `site/pages/search.astro`), and Debian's chromium (playwright-core) measures, per query
 * kind (a host, a task), in a fresh context so nothing is cached:
 * - the first query: to its first answer (hosts, services and tasks) and to its whole answer (endpoints merged in),
 *   loading Pagefind's script, wasm and index files included;
 * - the next query on the same page, the index loaded (the target);
 * - the page's main-thread CPU time for each (Chrome's `ThreadTime`), and the bytes moved (gzip, as a static host
 *   sends them; the page itself not counted).
 * Times are taken in the page, from the submit to the answer's words on the page, on this machine's CPU: the load
 * average is printed beside them. BENCH_SEARCH_DIR=<dir> keeps the index there and reuses it on the next run.
 */
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import type { SearchRecord } from '../site/lib/endpoint-pages.ts';
import { writeSearchIndex } from '../site/lib/search-index.ts';
import { launchChromium } from '../test/helpers/browser.ts';
import { startStaticServer } from '../test/helpers/static-server.ts';
import { tempDataDir } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';

const ROOT = resolve(import.meta.dirname, '..');
const TASKS = [
  'weather-current',
  'fx-rate',
  'geocode',
  'token-price',
  'translate',
  'ocr',
  'summarize',
  'dns-lookup',
];
const REASONS = ['price_above_max', 'wallet_changed', 'network_mismatch', 'no_challenge', 'unreachable'];
const SOURCES = ['bazaar', 'well-known', 'circle', 'x402scan'];

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const endpoints = intEnv('BENCH_SEARCH_ENDPOINTS', 50_000);
  const hosts = Math.max(1, Math.round(endpoints / 25));
  console.log(`\n== site-search: Pagefind index of ${endpoints} endpoints, ${hosts} hosts, in chromium ==`);
  const kept = process.env.BENCH_SEARCH_DIR;
  const data = kept === undefined ? await tempDataDir('site-search') : { dir: kept };
  const out = join(data.dir, 'site');
  try {
    const records = searchRecords(endpoints, hosts);
    const t = performance.now();
    // BENCH_SEARCH_DIR keeps the index between runs: one built there before is used as it is.
    const built = kept !== undefined && (await stat(join(out, 'pagefind', 'pagefind.js')).catch(() => null));
    if (!built) await writeSearchIndex(records, out);
    const buildS = (performance.now() - t) / 1000;
    const files = await indexFiles(out);
    console.log(
      `index of ${records.length} records built in ${buildS.toFixed(1)} s (load ${load()}); page list ${kb(files.meta)} KB gzip`,
    );
    await writeSearchPage(out);
    const server = await startStaticServer(out);
    const browser = await launchChromium();
    const figures: Figure[] = [];
    const notes: string[] = [];
    try {
      const queries: Array<[string, string, string]> = [
        ['host', hostName(7), hostName(hosts - 3)],
        ['task', TASKS[2] as string, TASKS[5] as string],
      ];
      for (const [kind, first, second] of queries) {
        const cold = await timeQueries(browser, server.url, first, second);
        console.log(
          `${kind.padEnd(4)} first query: first answer ${ms(cold.coldFirstMs)}, whole ${ms(cold.coldWholeMs)}; ` +
            `next query ${ms(cold.warmMs)}; main-thread CPU ${ms(cold.coldCpuMs)} and ${ms(cold.warmCpuMs)}; ${cold.results} results listed; moved ${kb(cold.firstBytes)} KB ` +
            `before the endpoints, ${kb(cold.bytes)} KB in all (${cold.requests} requests), load ${load()}`,
        );
        for (const [path, bytes] of cold.largest) console.log(`     ${path} ${kb(bytes)} KB`);
        figures.push(
          {
            name: `${kind} query, next query (index loaded)`,
            value: round(cold.warmMs, 0),
            unit: 'ms',
            target: { max: 100 },
          },
          { name: `${kind} query, next query, main-thread CPU`, value: round(cold.warmCpuMs, 0), unit: 'ms' },
          { name: `${kind} query, first query, first answer`, value: round(cold.coldFirstMs, 0), unit: 'ms' },
          {
            name: `${kind} query, first query, endpoints included`,
            value: round(cold.coldWholeMs, 0),
            unit: 'ms',
          },
          {
            name: `${kind} query, first query, main-thread CPU`,
            value: round(cold.coldCpuMs, 0),
            unit: 'ms',
          },
          {
            name: `${kind} query, first query moves before the endpoints`,
            value: round(cold.firstBytes / 1024, 1),
            unit: 'KB',
            target: { max: 100 },
          },
          { name: `${kind} query, first query moves in all`, value: round(cold.bytes / 1024, 1), unit: 'KB' },
        );
      }
      notes.push(
        `load average ${load()} at the end; ${records.length} records, built in ${buildS.toFixed(1)} s`,
      );
    } finally {
      await browser.close();
      await server.close();
    }
    return { bench: 'site-search', figures, notes };
  } finally {
    if (kept === undefined) await rm(data.dir, { recursive: true, force: true });
  }
}

function load(): string {
  return (loadavg()[0] ?? 0).toFixed(1);
}

function ms(value: number): string {
  return `${value.toFixed(0)} ms`;
}

function kb(bytes: number): string {
  return (bytes / 1024).toFixed(1);
}

function hostName(i: number): string {
  return `api-${i}.seller${i % 97}.example`;
}

/** Records shaped as `site/lib/endpoint-pages.ts` pushes them: endpoints, their services, hosts and tasks. */
function searchRecords(endpoints: number, hosts: number): SearchRecord[] {
  const records: SearchRecord[] = [];
  const byHost = new Map<string, string[]>();
  for (let i = 0; i < endpoints; i++) {
    const host = hostName(i % hosts);
    const method = i % 5 === 0 ? 'POST' : 'GET';
    const url = `https://${host}/v1/${['quote', 'data', 'run', 'item'][i % 4]}/${i}`;
    const key = `${host}-${i.toString(36)}`;
    const verdict = ['pay', 'skip', 'recheck'][i % 3] as string;
    const task = i % 10 === 0 ? (TASKS[(i / 10) % TASKS.length] as string) : null;
    const service = `svc-${i}`;
    byHost.set(host, [...(byHost.get(host) ?? []), `${method} ${url}`]);
    records.push({
      url: `/endpoints/${key}/`,
      kind: 'endpoint',
      title: `${method} ${url}`,
      content: [
        `Endpoint ${method} ${url}`,
        `host ${host}`,
        `latest verdict ${verdict}`,
        verdict === 'pay' ? '' : (REASONS[i % REASONS.length] as string),
        `listed by ${SOURCES[i % SOURCES.length]}`,
        ...(task === null ? [] : [`task ${task} service ${service}`]),
      ].join('. '),
    });
    if (task !== null)
      records.push({
        url: `/endpoints/${key}/#known-answers`,
        kind: 'service',
        title: `Service ${service}`,
        content: `Service ${service}. Task ${task}. 3 of 4 known answers passed. Host ${host}.`,
      });
  }
  for (const [host, list] of byHost)
    records.push({
      url: `/hosts/${host}/`,
      kind: 'host',
      title: `Host ${host}`,
      content: `Host ${host}: ${list.length} endpoints. ${list.slice(0, 50).join(' ')}`,
    });
  for (const task of TASKS)
    records.push({
      url: `/tasks/${task}/`,
      kind: 'task',
      title: `Task ${task}`,
      content: `Task ${task}. A catalog task. What a service of ${task} answers.`,
    });
  return records;
}

async function indexFiles(out: string): Promise<{ meta: number }> {
  let meta = 0;
  for (const name of await readdir(join(out, 'pagefind')))
    if (name.endsWith('.pf_meta')) meta += (await stat(join(out, 'pagefind', name))).size;
  return { meta };
}

/**
 * The search page's own script, as the build inlines it (`site/pages/search.astro`), in a bare page: the same
 * Pagefind options and the same steps (search, then the first ten results' data).
 */
async function writeSearchPage(out: string): Promise<void> {
  const source = await readFile(join(ROOT, 'site/pages/search.astro'), 'utf8');
  const script = /<script is:inline>([\s\S]*?)<\/script>/.exec(source)?.[1];
  if (script === undefined) throw new Error('site-search: no inline script in site/pages/search.astro');
  await mkdir(join(out, 'search'), { recursive: true });
  await writeFile(
    join(out, 'search', 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Search</title></head><body>
<form id="search-form" role="search" action="/search/" method="get"><input id="search-input" name="q" type="search"><button type="submit">Search</button></form>
<div id="search-results" data-ready="false" aria-live="polite"></div>
<script>${script}</script></body></html>`,
  );
}

type Timing = {
  coldFirstMs: number;
  coldWholeMs: number;
  warmMs: number;
  coldCpuMs: number;
  warmCpuMs: number;
  firstBytes: number;
  results: number;
  bytes: number;
  requests: number;
  largest: Array<[string, number]>;
};

/** One fresh context: the first query typed (cold), then a second one on the same page (warm). */
async function timeQueries(
  browser: import('playwright-core').Browser,
  base: string,
  first: string,
  second: string,
): Promise<Timing> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  // The page's main-thread CPU time: what a loaded machine changes least (wall times wait for the CPU too).
  const cpu = async () =>
    ((await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ThreadTime')?.value ?? 0) *
    1000;
  const moved = new Map<string, number>();
  page.on('requestfinished', (request) => {
    void request.response().then(async (res) => {
      const body = await res?.body().catch(() => null);
      if (body) moved.set(new URL(request.url()).pathname, gzipSync(body).length);
    });
  });
  try {
    await page.goto(`${base}/search/`);
    await page.locator('#search-results[data-ready="true"]').waitFor({ state: 'attached' });
    const pageBytes = new Map(moved);
    let before = await cpu();
    const cold = await typeAndWait(page, first);
    const coldCpuMs = (await cpu()) - before;
    const results = await page.locator('#search-results li').count();
    const bytes = [...moved].filter(([p]) => !pageBytes.has(p)).reduce((sum, [, b]) => sum + b, 0);
    const requests = moved.size - pageBytes.size;
    const largest = [...moved]
      .filter(([p]) => !pageBytes.has(p))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4);
    const firstBytes = [...moved]
      .filter(([p]) => !pageBytes.has(p) && !p.startsWith('/pagefind-endpoints/'))
      .reduce((sum, [, b]) => sum + b, 0);
    before = await cpu();
    const warm = await typeAndWait(page, second);
    const warmCpuMs = (await cpu()) - before;
    return {
      coldFirstMs: cold.firstMs,
      coldWholeMs: cold.wholeMs,
      warmMs: warm.wholeMs,
      coldCpuMs,
      warmCpuMs,
      firstBytes,
      results,
      bytes,
      requests,
      largest,
    };
  } finally {
    await context.close();
  }
}

/**
 * Types `query` and submits; the milliseconds in the page from the submit to the first answer listed (hosts,
 * services and tasks) and to the whole answer (endpoints merged in).
 */
async function typeAndWait(page: Page, query: string): Promise<{ firstMs: number; wholeMs: number }> {
  await page.locator('#search-input').fill(query);
  // As text: the bundler's helpers for named functions do not exist in the page.
  return page.evaluate(`new Promise((done, fail) => {
    const q = ${JSON.stringify(query)};
    const out = document.getElementById('search-results');
    const start = performance.now();
    let firstMs = -1;
    const seen = new MutationObserver(() => {
      const text = out.textContent ?? '';
      if (firstMs < 0 && text.includes('“' + q + '”')) firstMs = performance.now() - start;
      if (text.includes('“' + q + '”.') && out.dataset.complete === 'true') {
        seen.disconnect();
        done({ firstMs, wholeMs: performance.now() - start });
      }
    });
    seen.observe(out, { childList: true, subtree: true, attributes: true });
    setTimeout(() => fail(new Error('no whole answer for ' + q + ' in 30 s')), 30000);
    document.getElementById('search-form').requestSubmit();
  })`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
