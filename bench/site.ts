/**
 * The public site: `npm run build:site` of a crawl run with BENCH_SITE_RECEIPTS receipts
 * (default 100,000) and 10 % skips (10,000 skip records), written by the crawl's own code behind a fake prober
 * (`test/fixtures/crawl-run.ts`), its wall time, phases and peak RSS; the live badge render p50 through the app; and
 * the weight over the wire (gzip) of the home and skip pages, which load no JavaScript.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { checkRow } from '../test/fixtures/check-row.ts';
import { writeCrawlFixture } from '../test/fixtures/crawl-run.ts';
import { startTestService } from '../test/helpers/service.ts';
import { removeLater, tempDataDir } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { summarize } from './_lib/stats.ts';
import { describePeaks, type TreeRss, watchTreeRss } from './_lib/tree-rss.ts';

const ROOT = resolve(import.meta.dirname, '..');

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const receipts = intEnv('BENCH_SITE_RECEIPTS', 100_000);
  console.log(
    `\n== site: build of ${receipts} receipts, ${receipts / 10} skip records; live badge; page weights ==`,
  );
  const data = await tempDataDir('site');
  try {
    let t = performance.now();
    await writeCrawlFixture({
      dataDir: data.dir,
      baseUrl: 'https://spotcheck.example',
      finishedAt: new Date(),
      endpoints: receipts,
      skipPercent: 10,
      hosts: 2000,
    });
    console.log(`fixture run written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    t = performance.now();
    const build = await buildWithRss(data.dir);
    const buildS = (performance.now() - t) / 1000;
    console.log(`build ${buildS.toFixed(1)} s, load average ${loadavg()[0]}`);
    console.log(build.out.trim());
    const weights = await pageWeights(join(data.dir, 'site'));
    for (const [page, w] of Object.entries(weights))
      console.log(`${page.padEnd(12)} ${w.raw} B raw, ${w.gzip} B gzip, ${w.scripts} scripts`);
    const badge = await badgeP50(data.dir);
    console.log(
      `live badge render p50 ${badge.p50.toFixed(3)} ms, p99 ${badge.p99.toFixed(3)} ms over ${badge.n}`,
    );
    const figures: Figure[] = [
      { name: `site build, ${receipts} receipts`, value: round(buildS, 1), unit: 's', target: { max: 90 } },
      // The target is held against the high-water bound, which a moment between two samples cannot exceed.
      ...(build.tree === null
        ? []
        : [
            {
              name: 'site build peak RSS, processes at once',
              value: build.tree.boundMb,
              unit: 'MB',
              target: { max: 1536 },
            },
            { name: 'site build peak RSS, sampled', value: build.tree.peakMb, unit: 'MB' },
          ]),
      { name: 'live badge render p50', value: round(badge.p50, 3), unit: 'ms', target: { max: 5 } },
      {
        name: 'home page over the wire',
        value: round(weights.home.gzip / 1024, 1),
        unit: 'KB',
        target: { max: 100 },
      },
      {
        name: 'skip page over the wire',
        value: round(weights.skips.gzip / 1024, 1),
        unit: 'KB',
        target: { max: 100 },
      },
      { name: 'receipt page over the wire', value: round(weights.receipt.gzip / 1024, 1), unit: 'KB' },
    ];
    const phases = /phases: (.*)/.exec(build.out)?.[1];
    return {
      bench: 'site',
      figures,
      notes: [
        'HTML carries its CSS inline; gzip level 6 as the server sends it; only /verify/ loads a script',
        ...(phases ? [`build phases: ${phases}`] : []),
        ...(build.tree
          ? [
              `build processes' own peaks (MB): ${build.tree.processes
                .map((p) => p.peakMb)
                .filter((mb) => mb >= 20)
                .sort((a, b) => b - a)
                .join(', ')}`,
            ]
          : []),
        `load average at the end of the bench: ${loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')} (2 shared cores)`,
      ],
    };
  } finally {
    removeLater(data.dir);
  }
}

/**
 * `npm run build:site` in a child, as a maintainer runs it, with the peak of the memory its processes held at once
 * (`bench/_lib/tree-rss.ts`): npm, the tsx launcher, the build's own process and the Astro process it starts (with
 * any helper they start), sampled together, so processes that overlap in time add up and phases that follow each
 * other do not (BENCHMARKS.md, `site`).
 */
export async function buildWithRss(dataDir: string): Promise<{ out: string; tree: TreeRss | null }> {
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    BASE_URL: 'https://spotcheck.example',
    SITE_BUILD_REPORT: '1',
  };
  const child = spawn('npm', ['run', '--silent', 'build:site'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watch = child.pid === undefined ? null : watchTreeRss(child.pid);
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const code = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', done);
  });
  const tree = watch?.stop() ?? null;
  if (code !== 0) throw new Error(`npm run build:site failed (exit ${code}): ${err.slice(-2000)}`);
  if (tree === null) console.log('peak RSS of the build: not measured (no /proc on this system)');
  else {
    console.log(
      `peak RSS of the build, all its processes at once: ${tree.peakMb} MB sampled every ${tree.intervalMs} ms (${(tree.peakAtMs / 1000).toFixed(1)} s in), at most ${tree.boundMb} MB by the processes' high-water marks; per process:`,
    );
    console.log(describePeaks(tree).join('\n'));
    console.log(`CPU time of the build's processes: ${tree.cpuS.toFixed(1)} s`);
  }
  return { out, tree };
}

async function pageWeights(site: string) {
  const receiptDir = (await readdir(join(site, 'receipts'))).find((name) => !name.endsWith('.json'));
  const pages = {
    home: 'index.html',
    skips: 'v1/skips/index.html',
    receipt: `receipts/${receiptDir}/index.html`,
  };
  const out = {} as Record<keyof typeof pages, { raw: number; gzip: number; scripts: number }>;
  for (const [name, path] of Object.entries(pages) as Array<[keyof typeof pages, string]>) {
    const html = await readFile(join(site, path));
    out[name] = {
      raw: html.length,
      gzip: gzipSync(html).length,
      scripts: (html.toString().match(/<script/g) ?? []).length,
    };
  }
  return out;
}

/** Live badges through the app (no socket): 200 hosts in the store, each asked in turn. */
async function badgeP50(dataDir: string) {
  const t = await startTestService({}, {}, { dataDir, listen: false });
  try {
    const now = Date.now();
    t.service.deps.store.indexReceipts(
      Array.from({ length: 2000 }, (_, i) =>
        checkRow(
          `sc-${String(i)
            .padStart(25, 'a')
            .replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)] as string)}a`,
          `https://badge-${i % 200}.example/x${i}`,
          i % 3 ? 'pay' : 'skip',
          new Date(now - i * 60_000).toISOString(),
          {},
          i % 30,
        ),
      ),
    );
    const ask = async (i: number) =>
      (await t.service.app.fetch(new Request(`http://127.0.0.1/badge/badge-${i % 200}.example.svg`))).text();
    for (let i = 0; i < 200; i++) await ask(i);
    const times: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const start = performance.now();
      await ask(i);
      times.push(performance.now() - start);
    }
    const s = summarize(times);
    return { p50: s.p50, p99: s.p99, n: times.length };
  } finally {
    await t.stop({ keepData: true });
  }
}
