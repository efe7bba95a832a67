/**
 * The site at history scale (docs/site.md "Endpoint, host and task pages", "Rebuilding after a crawl"): a published
 * crawl of BENCH_HISTORY_ENDPOINTS endpoints (default 5,000) written by the crawl's own code, and
 * BENCH_HISTORY_RUNS - 1 older runs of the same endpoints (default 19: 20 runs, 100,000 receipts), four days apart
 * so all are inside the 90-day window, written as receipt indexes beside it, every tenth endpoint with a new wallet
 * in each; then `npm run build:site` four times: the full build, a rebuild with no new run (nothing to rewrite),
 * and a rebuild after each of two new crawls of every endpoint (the second is the routine's steady state: the build
 * it replaces wrote its own files, which it reuses). Prints the times, the peak memory of the full build, the files
 * written and kept, and the endpoint page's weight over the wire (gzip, as the server sends it). The scale
 * (1,000,000 receipts, 50,000 endpoints) is `BENCH_HISTORY_ENDPOINTS=50000 BENCH_HISTORY_RUNS=20`.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { writeCrawlFixture } from '../test/fixtures/crawl-run.ts';
import { removeLater, tempDataDir } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { buildWithRss } from './site.ts';

const DAY = 86_400_000;
const BASE_URL = 'https://spotcheck.example';

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const endpoints = intEnv('BENCH_HISTORY_ENDPOINTS', 5_000);
  const runs = intEnv('BENCH_HISTORY_RUNS', 20);
  console.log(`\n== site-history: ${runs} runs of ${endpoints} endpoints (${runs * endpoints} receipts) ==`);
  const data = await tempDataDir('site-history');
  try {
    const now = Date.now();
    let t = performance.now();
    const published = await writeCrawlFixture({
      dataDir: data.dir,
      baseUrl: BASE_URL,
      finishedAt: new Date(now - 7 * DAY),
      endpoints,
      skipPercent: 10,
      hosts: Math.max(1, Math.round(endpoints / 25)),
    });
    await writeOlderRuns(published.runDir, data.dir, runs - 1, now - 7 * DAY);
    console.log(`history written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const full = await timedBuild(data.dir, 'full build');
    const same = await timedBuild(data.dir, 'rebuild, no new run');
    t = performance.now();
    await writeCrawlFixture({
      dataDir: data.dir,
      baseUrl: BASE_URL,
      finishedAt: new Date(now),
      endpoints,
      skipPercent: 10,
      hosts: Math.max(1, Math.round(endpoints / 25)),
      seed: 2,
      walletShift: 3,
    });
    console.log(`a new crawl of every endpoint written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const after = await timedBuild(data.dir, 'rebuild after a crawl');
    // The routine's steady state: another crawl, another rebuild. The build it replaces (two back) wrote its own
    // page files, which this one writes over (site/lib/page-writer.ts); the one above found them shared.
    t = performance.now();
    await writeCrawlFixture({
      dataDir: data.dir,
      baseUrl: BASE_URL,
      finishedAt: new Date(now + DAY),
      endpoints,
      skipPercent: 10,
      hosts: Math.max(1, Math.round(endpoints / 25)),
      seed: 3,
      walletShift: 6,
    });
    console.log(
      `a second crawl of every endpoint written in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const again = await timedBuild(data.dir, 'rebuild after a second crawl');
    const weight = await endpointPageWeights(join(data.dir, 'site'));
    console.log(
      `endpoint pages over the wire (gzip): median ${weight.median} B, largest ${weight.max} B of ${weight.n} sampled`,
    );
    const figures: Figure[] = [
      { name: `full build, ${runs * endpoints} receipts, ${endpoints} endpoints`, value: full.s, unit: 's' },
      ...(full.rssMb === null
        ? []
        : [
            {
              name: 'full build peak RSS, processes at once',
              value: full.rssMb,
              unit: 'MB',
              target: { max: 1536 },
            },
          ]),
      { name: 'rebuild with no new run', value: same.s, unit: 's' },
      { name: 'rebuild after a crawl of every endpoint', value: after.s, unit: 's' },
      { name: 'rebuild after a second crawl', value: again.s, unit: 's' },
      {
        name: 'endpoint page over the wire, largest',
        value: round(weight.max / 1024, 1),
        unit: 'KB',
        target: { max: 100 },
      },
    ];
    return {
      bench: 'site-history',
      figures,
      notes: [full.line, same.line, after.line, again.line].filter((l) => l !== ''),
    };
  } finally {
    removeLater(data.dir);
  }
}

/**
 * Older runs beside the published one, four days apart: its receipt index with each line four days earlier per run, ids of
 * their own, and every tenth endpoint with another wallet in each run, so timelines have changes to draw.
 */
export async function writeOlderRuns(
  publishedDir: string,
  dataDir: string,
  count: number,
  newest: number,
): Promise<void> {
  const lines = (await readFile(join(publishedDir, 'receipts.ndjson'), 'utf8'))
    .split('\n')
    .filter((l) => l !== '');
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  for (let k = 1; k <= count; k++) {
    const finished = new Date(newest - k * 4 * DAY);
    const runId = `${finished
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}Z$/, 'Z')}-${k.toString(16).padStart(4, '0')}`;
    const dir = join(dataDir, 'crawl', 'runs', runId);
    await mkdir(dir, { recursive: true });
    const out = parsed.map((line, i) => {
      const at = new Date(Date.parse(line.issued_at as string) - k * 4 * DAY).toISOString();
      const changed = i % 10 === 0 && typeof line.pay_to === 'string';
      const pay_to = changed ? `0x${(k * 7919 + i).toString(16).padStart(40, '0')}` : line.pay_to;
      return JSON.stringify({ ...line, id: idFor(line.id as string, k), issued_at: at, pay_to });
    });
    await writeFile(join(dir, 'receipts.ndjson'), `${out.join('\n')}\n`);
    await writeFile(
      join(dir, 'run.json'),
      JSON.stringify({ schema: 1, run_id: runId, finished_at: finished.toISOString() }),
    );
  }
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A receipt id of the same form (`sc-` and 26 base32 letters) for the copy of `id` in older run `k`. */
function idFor(id: string, k: number): string {
  return `${id.slice(0, -2)}${BASE32[k % 32]}${BASE32[Math.floor(k / 32) % 32]}`;
}

async function timedBuild(dataDir: string, label: string) {
  const t = performance.now();
  const build = await buildWithRss(dataDir);
  const s = round((performance.now() - t) / 1000, 1);
  const line = /site built from [^\n]*/.exec(build.out)?.[0] ?? '';
  const phases = /phases: (.*)/.exec(build.out)?.[1] ?? '';
  const cpu = /\] (CPU [^\n]*)/.exec(build.out)?.[1] ?? 'CPU not reported';
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(`${label}: ${s} s (load ${load}); ${line}\n  phases: ${phases}\n  ${cpu}`);
  return {
    s,
    rssMb: build.tree?.boundMb ?? null,
    line: `${label} (${s} s, load ${load}): ${line}; phases: ${phases}; ${cpu}`,
  };
}

/** The gzip size of up to 2,000 endpoint pages of the build (its first by key), median and largest. */
async function endpointPageWeights(site: string): Promise<{ median: number; max: number; n: number }> {
  const keys = (await readdir(join(site, 'endpoints')))
    .filter((n) => !n.endsWith('.json'))
    .sort()
    .slice(0, 2000);
  const sizes: number[] = [];
  for (const key of keys)
    sizes.push(gzipSync(await readFile(join(site, 'endpoints', key, 'index.html'))).length);
  sizes.sort((a, b) => a - b);
  return { median: sizes[Math.floor(sizes.length / 2)] ?? 0, max: sizes.at(-1) ?? 0, n: sizes.length };
}

if (import.meta.main) {
  const result = await run();
  for (const f of result.figures) console.log(`${f.name}: ${f.value} ${f.unit}`);
}
