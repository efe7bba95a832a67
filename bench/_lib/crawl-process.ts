/**
 * The crawl of `bench/crawl.ts`, in a process of its own, started with the Node flags `npm run crawl` gives the
 * crawl (read from package.json by {@link crawlNodeFlags}), so its heap and RSS are those of the real command.
 * Over IPC: `{ type: 'crawl', listingsFile, dataDir, sourceUrl? }` runs the crawl (the real prober, SSRF gate with loopback
 * allowed as PROBE_ALLOW_CIDRS does, signing, journal and publication) and answers its measurements.
 */
import { readFile } from 'node:fs/promises';
import { type CpuInfo, cpus } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { parseCidrList } from '../../core/ssrf.ts';
import { createAssemblyThread } from '../../crawl/assembly.ts';
import { CRAWL_TIMEOUT_MS } from '../../crawl/cli-deps.ts';
import { MAX_DEFAULT_CONCURRENCY, runCrawl } from '../../crawl/run.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES, SOURCE_TIMEOUT_MS } from '../../crawl/sources/fetch-json.ts';
import { readSource } from '../../crawl/sources/read-source.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { createProber } from '../../io/probe/prober.ts';
import { pooledRandom } from '../../io/random-pool.ts';
import { runPaths } from '../../io/runs/paths.ts';

/** What the crawl process measured. */
export type CrawlMeasured = {
  type: 'measured';
  total: number;
  runPath: string;
  probingMs: number;
  totalMs: number;
  /** CPU of the process (user + system, every thread) and of its main thread during the probing, µs. */
  probingCpuUs: number;
  probingThreadUs: number;
  /** Main-thread GC pauses during the probing (PerformanceObserver `gc` entries), ms. */
  probingGcMs: number;
  /** How busy the whole machine was during the probing (every process: the fleet too), per cent of all cores. */
  probingMachineBusyPct: number;
  peakRssBytes: number;
  heapLimitBytes: number;
};

/** The Node flags of the `crawl` script in package.json (those between `tsx` and the script). */
export async function crawlNodeFlags(root: string): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    scripts: { crawl: string };
  };
  return pkg.scripts.crawl.split(/\s+/).filter((word) => word.startsWith('--'));
}

/**
 * The source: a listings file, or (`sourceUrl`) a discovery list read page by page as the crawl reads CDP's, through
 * the same SSRF gate with loopback allowed.
 */
function sourceOf(listingsFile: string, sourceUrl: string | undefined) {
  if (sourceUrl === undefined)
    return readSource(async () => ({ ok: false, note: 'unused' }), {
      name: 'bench',
      kind: 'file',
      location: listingsFile,
    });
  const prober = createProber({
    allow: parseCidrList('127.0.0.0/8'),
    maxBodyBytes: SOURCE_MAX_BYTES,
    timeoutMs: SOURCE_TIMEOUT_MS,
  });
  return readSource(fetchJsonVia(prober), { name: 'catalog', kind: 'discovery', location: sourceUrl });
}

async function crawl(listingsFile: string, dataDir: string, sourceUrl?: string): Promise<CrawlMeasured> {
  const { signer } = await loadSigningKeys({ dir: join(dataDir, 'keys') });
  const paths = runPaths(join(dataDir, 'data'), 'crawl');
  let probingStarted = 0;
  let probingMs = 0;
  // CPU over the probing, of the whole process and of its main thread (which runs every probe's JavaScript):
  // load-tolerant, unlike the wall time.
  let cpuAtStart = process.cpuUsage();
  let threadAtStart = process.threadCpuUsage();
  let probingCpuUs = 0;
  let probingThreadUs = 0;
  let gcMs = 0;
  let probingGcMs = 0;
  let cpusAtStart = cpus();
  let probingMachineBusyPct = Number.NaN;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  const t0 = performance.now();
  // As `npm run crawl` does (crawl/main.ts): checks assembled on their own thread.
  const assembly = createAssemblyThread();
  const result = await runCrawl(
    {
      prober: createProber({
        allow: parseCidrList('127.0.0.0/8'),
        timeoutMs: CRAWL_TIMEOUT_MS,
        reuseConnections: true,
        maxIdleConnections: MAX_DEFAULT_CONCURRENCY,
      }),
      signer,
      assemble: assembly.assemble,
      now: () => new Date(),
      // Receipt ids: one call into the CSPRNG per 256 ids (io/random-pool.ts), not one per probe.
      random: pooledRandom(),
      baseUrl: 'http://127.0.0.1:8402',
      paths,
      readSources: () => Promise.all([sourceOf(listingsFile, sourceUrl)]),
      monotonic: () => performance.now(),
      progressOut: {
        write: (text: string) => {
          // The last progress line marks the end of probing.
          if (!/100%/.test(text)) return true;
          probingMs = performance.now() - probingStarted;
          const cpu = process.cpuUsage(cpuAtStart);
          const thread = process.threadCpuUsage(threadAtStart);
          probingCpuUs = cpu.user + cpu.system;
          probingThreadUs = thread.user + thread.system;
          probingGcMs = gcMs - probingGcMs;
          probingMachineBusyPct = busyPct(cpusAtStart, cpus());
          return true;
        },
      },
      log: (line) => {
        // The plan is written: probing starts.
        if (!line.startsWith('run ')) return;
        probingStarted = performance.now();
        cpuAtStart = process.cpuUsage();
        threadAtStart = process.threadCpuUsage();
        probingGcMs = gcMs;
        cpusAtStart = cpus();
      },
    },
    { resume: false, concurrency: null, limit: null },
  ).finally(() => assembly.close());
  gc.disconnect();
  return {
    type: 'measured',
    total: result.total,
    runPath: join(paths.root, result.pointer.path),
    probingMs,
    totalMs: performance.now() - t0,
    probingCpuUs,
    probingThreadUs,
    probingGcMs,
    probingMachineBusyPct,
    // maxRSS is the kernel's peak (KiB), not a sample.
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    heapLimitBytes: getHeapStatistics().heap_size_limit,
  };
}

/** The share of all cores' time that was not idle between two `os.cpus()` readings, in per cent. */
function busyPct(before: CpuInfo[], after: CpuInfo[]): number {
  let busy = 0;
  let idle = 0;
  after.forEach(({ times: now }, i) => {
    const start = before[i]?.times;
    if (!start) return;
    busy += now.user - start.user + (now.nice - start.nice) + (now.sys - start.sys) + (now.irq - start.irq);
    idle += now.idle - start.idle;
  });
  return busy + idle > 0 ? (100 * busy) / (busy + idle) : Number.NaN;
}

process.on(
  'message',
  (message: { type?: string; listingsFile?: string; dataDir?: string; sourceUrl?: string }) => {
    if (message.type !== 'crawl') return;
    crawl(message.listingsFile ?? '', message.dataDir ?? '', message.sourceUrl).then(
      (measured) => process.send?.(measured),
      (error: unknown) =>
        process.send?.({ type: 'failed', message: String((error as Error)?.stack ?? error) }),
    );
  },
);
process.on('disconnect', () => process.exit(0));
