/**
 * Target: Lighthouse accessibility >= 95 and performance >= 90 on the home, skip listing and endpoint pages
 * (docs/site.md "Look"). The showcase site (`test/helpers/showcase-site.ts`: a sandbox crawl after two earlier runs
 * and a known-answer run) is built with `npm run build:site` and served by the real service on loopback; Lighthouse
 * (the `lighthouse` devDependency, its Node API) drives Debian's chromium through `chrome-launcher`, offline: only
 * the accessibility and performance categories, Lighthouse's default mobile emulation with simulated throttling,
 * and chromium started without background networking, so no audit reaches outside the machine.
 * `npm run site:lighthouse` runs it alone; `LIGHTHOUSE_DATA_DIR=<dir>` reuses a built DATA_DIR (kept).
 * Performance is timed on this machine's CPU (simulated throttling multiplies main-thread time), so a loaded machine
 * lowers it: the load average is printed beside the scores.
 */
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { endpointKeyOfUrl, endpointPagePath } from '../core/endpoint-paths.ts';
import { CHROMIUM } from '../test/helpers/browser.ts';
import { startTestService } from '../test/helpers/service.ts';
import { SHOWCASE_URL, showcaseSite } from '../test/helpers/showcase-site.ts';
import type { Figure, Result } from './_lib/result.ts';

const FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--no-first-run',
  '--disable-quic',
];

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  console.log('\n== lighthouse: accessibility and performance of the home, skips and endpoint pages ==');
  const kept = process.env.LIGHTHOUSE_DATA_DIR;
  const dataDir = kept ?? (await showcaseSite()).dataDir;
  const t = await startTestService({}, {}, { dataDir });
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: FLAGS });
  const figures: Figure[] = [];
  const notes: string[] = [];
  const started = performance.now();
  try {
    const pages: Array<[string, string]> = [
      ['home', '/'],
      ['skips', '/v1/skips/'],
      ['endpoint', endpointPagePath(endpointKeyOfUrl(SHOWCASE_URL, 'GET') as string)],
    ];
    for (const [name, path] of pages) {
      const at = performance.now();
      const answer = await lighthouse(`${t.url}${path}`, {
        port: chrome.port,
        output: 'json',
        logLevel: 'error',
        onlyCategories: ['accessibility', 'performance'],
      });
      const lhr = answer?.lhr;
      if (lhr === undefined || lhr.runtimeError !== undefined)
        throw new Error(`lighthouse ${path}: ${lhr?.runtimeError?.message ?? 'no result'}`);
      const a11y = Math.round((lhr.categories.accessibility?.score ?? 0) * 100);
      const perf = Math.round((lhr.categories.performance?.score ?? 0) * 100);
      const seconds = ((performance.now() - at) / 1000).toFixed(1);
      console.log(
        `  ${name.padEnd(9)} accessibility ${a11y}  performance ${perf}  (${seconds} s, load ${loadavg()[0]?.toFixed(1)})`,
      );
      figures.push(
        { name: `${name} accessibility`, value: a11y, unit: 'score', target: { min: 95 } },
        { name: `${name} performance`, value: perf, unit: 'score', target: { min: 90 } },
      );
      for (const audit of Object.values(lhr.audits))
        if (audit.score !== null && audit.score < 0.9 && audit.scoreDisplayMode === 'numeric')
          notes.push(`${name}: ${audit.id} ${audit.displayValue ?? ''} (score ${audit.score})`);
    }
  } finally {
    chrome.kill();
    await t.stop({ keepData: kept !== undefined });
    if (kept === undefined) await rm(dataDir, { recursive: true, force: true });
  }
  const total = (performance.now() - started) / 1000;
  console.log(
    `  three pages in ${total.toFixed(1)} s, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  notes.push(`three pages in ${total.toFixed(1)} s at load ${loadavg()[0]?.toFixed(1)}`);
  return { bench: 'lighthouse', figures, notes };
}

if (import.meta.main) {
  const result = await run();
  const missed = figuresMissed(result.figures);
  for (const note of result.notes) console.log(`  note: ${note}`);
  process.exitCode = missed.length === 0 ? 0 : 1;
}

function figuresMissed(figures: readonly Figure[]): Figure[] {
  return figures.filter((f) => f.target !== undefined && 'min' in f.target && f.value < f.target.min);
}
