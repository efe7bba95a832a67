/**
 * Crawl of a simulated fleet (issue 7 targets): 10,000 endpoints on 500 loopback hosts (one port each), each host
 * answering an honest 402 after its own latency. Measures the wall time of the probing against the per-host lower
 * bound (the slowest host's ⌈requests/3⌉ × latency), the whole run (sources, probing, files, publication), the
 * peak RSS of the crawl's process, and the most requests any host saw in flight. The real prober, SSRF gate
 * (loopback allowed as PROBE_ALLOW_CIDRS does), signing, journal and publication; the fleet runs in a process of its
 * own (`_lib/crawl-fleet.ts`), as sellers are remote in production, so its CPU and memory are not the crawl's.
 * Knobs: BENCH_CRAWL_ENDPOINTS (10000), BENCH_CRAWL_HOSTS (500).
 */

import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCidrList } from '../core/ssrf.ts';
import { runCrawl } from '../crawl/run.ts';
import { readSource } from '../crawl/sources/read-source.ts';
import { runPaths } from '../io/crawl-runs.ts';
import { loadSigningKeys } from '../io/keys.ts';
import { createProber } from '../io/prober.ts';
import { FLEET_WALLET } from '../sandbox/sellers/constants.ts';
import type { FleetHost } from './_lib/crawl-fleet.ts';
import { intEnv, type Result } from './_lib/result.ts';

/** Runs the bench. */
export async function run(): Promise<Result> {
  const endpoints = intEnv('BENCH_CRAWL_ENDPOINTS', 10_000);
  const hostCount = intEnv('BENCH_CRAWL_HOSTS', 500);
  const dir = await mkdtemp(join(tmpdir(), 'sc-bench-crawl-'));
  let stopFleet = () => {};
  let maxInFlight = 0;
  try {
    const fleet = fork(join(import.meta.dirname, '_lib/crawl-fleet.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    stopFleet = () => fleet.kill();
    const ask = <T>(message: object, type: string) =>
      new Promise<T>((resolve) => {
        const on = (answer: { type?: string }) => {
          if (answer.type !== type) return;
          fleet.off('message', on);
          resolve(answer as T);
        };
        fleet.on('message', on);
        fleet.send(message);
      });
    const hosts = (await ask<{ hosts: FleetHost[] }>({ type: 'start', hosts: hostCount }, 'hosts')).hosts.map(
      (h) => ({ ...h, n: 0 }),
    );
    const listings = Array.from({ length: endpoints }, (_, i) => {
      const host = hosts[i % hostCount]!;
      host.n++;
      return { url: `${host.origin}/item/${i}`, source: 'bench', price_usd: 0.01, pay_to: FLEET_WALLET };
    });
    const file = join(dir, 'listings.json');
    await writeFile(file, JSON.stringify(listings));
    const bound = Math.max(...hosts.map((h) => Math.ceil(h.n / 3) * h.latencyMs));

    const allow = parseCidrList('127.0.0.0/8');
    const { signer } = await loadSigningKeys({ dir: join(dir, 'keys') });
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 50);
    let probingStarted = 0;
    let probingMs = 0;
    // CPU over the probing, of the whole process and of its main thread (which runs every probe's JavaScript):
    // load-tolerant, unlike the wall time.
    let cpuAtStart = process.cpuUsage();
    let threadAtStart = process.threadCpuUsage();
    let probingCpuUs = 0;
    let probingThreadUs = 0;
    const t0 = performance.now();
    const result = await runCrawl(
      {
        prober: createProber({ allow, timeoutMs: 5000 }),
        signer,
        now: () => new Date(),
        random: (n) => new Uint8Array(randomBytes(n)),
        baseUrl: 'http://127.0.0.1:8402',
        paths: runPaths(join(dir, 'data'), 'crawl'),
        readSources: () =>
          Promise.all([
            readSource(async () => ({ ok: false, note: 'unused' }), {
              name: 'bench',
              kind: 'file',
              location: file,
            }),
          ]),
        monotonic: () => performance.now(),
        progressOut: {
          write: (text: string) => {
            // The first progress line marks the end of planning; the last one the end of probing.
            if (probingStarted === 0) probingStarted = performance.now();
            if (/100%/.test(text)) {
              probingMs = performance.now() - probingStarted;
              const cpu = process.cpuUsage(cpuAtStart);
              probingCpuUs = cpu.user + cpu.system;
              const thread = process.threadCpuUsage(threadAtStart);
              probingThreadUs = thread.user + thread.system;
            }
            return true;
          },
        },
        log: (line) => {
          if (!line.startsWith('run ')) return;
          probingStarted = performance.now();
          cpuAtStart = process.cpuUsage();
          threadAtStart = process.threadCpuUsage();
        },
      },
      { resume: false, concurrency: null, limit: null },
    );
    const totalMs = performance.now() - t0;
    clearInterval(sampler);
    const seen = await ask<{ maxInFlight: number; paymentHeaders: number }>({ type: 'stats' }, 'stats');
    maxInFlight = seen.maxInFlight;
    const ratio = probingMs / bound;
    const cpuMsPerProbe = probingCpuUs / 1000 / result.total;
    const threadMsPerProbe = probingThreadUs / 1000 / result.total;
    // Anything but price_ok means the machine could not keep up (a probe timed out or a host was refused).
    const summary = JSON.parse(
      await readFile(
        join(runPaths(join(dir, 'data'), 'crawl').root, result.pointer.path, 'summary.json'),
        'utf8',
      ),
    ) as { reasons: Record<string, number> };
    const notOk = Object.entries(summary.reasons).filter(([reason, n]) => reason !== 'price_ok' && n > 0);
    if (notOk.length > 0)
      console.log(`probes not answered price_ok: ${JSON.stringify(Object.fromEntries(notOk))}`);
    console.log(
      `crawl: ${result.total} endpoints on ${hostCount} hosts; probing ${(probingMs / 1000).toFixed(2)} s against a bound of ${(bound / 1000).toFixed(2)} s (×${ratio.toFixed(3)}); whole run ${(totalMs / 1000).toFixed(2)} s; CPU ${cpuMsPerProbe.toFixed(3)} ms per probe (main thread ${threadMsPerProbe.toFixed(3)}); peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB; most in flight at one host ${maxInFlight}`,
    );
    return {
      bench: 'crawl',
      figures: [
        {
          name: 'probing wall time / per-host lower bound',
          value: Number(ratio.toFixed(3)),
          unit: 'x',
          target: { max: 1.1 },
        },
        { name: 'probing wall time', value: Math.round(probingMs), unit: 'ms' },
        { name: 'per-host lower bound', value: bound, unit: 'ms' },
        {
          name: 'CPU of the crawl process per probe (user + system, during the probing)',
          value: Number(cpuMsPerProbe.toFixed(3)),
          unit: 'ms',
        },
        {
          name: 'CPU of the crawl main thread per probe (the probes, signing and GC pauses)',
          value: Number(threadMsPerProbe.toFixed(3)),
          unit: 'ms',
        },
        { name: 'whole run (sources, probing, files, publication)', value: Math.round(totalMs), unit: 'ms' },
        {
          name: 'peak RSS of the crawl process (the fleet runs in its own)',
          value: Math.round(peakRss / 2 ** 20),
          unit: 'MiB',
          target: { max: 400 },
        },
        {
          name: 'most requests in flight at one host',
          value: maxInFlight,
          unit: 'requests',
          target: { max: 3 },
        },
      ],
      notes: [
        `${endpoints} endpoints on ${hostCount} hosts, host latency 200-1000 ms; default concurrency (3 per host, at most 2048)`,
        `load average (1, 5, 15 min) at the end: ${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')}`,
        `probes not answered price_ok: ${notOk.length === 0 ? 'none' : JSON.stringify(Object.fromEntries(notOk))}`,
      ],
    };
  } finally {
    stopFleet();
    await rm(dir, { recursive: true, force: true });
  }
}
