/**
 * Crawl of a simulated fleet: 10,000 endpoints on 500 loopback hosts (one port each), each host
 * answering an honest 402 after its own latency. Measures the wall time of the probing against the per-host lower
 * bound (the slowest host's ⌈requests/3⌉ × latency), the whole run (sources, probing, files, publication), the
 * CPU per probe, the peak RSS of the crawl's process, and the most requests any host saw in flight. The real
 * prober, SSRF gate (loopback allowed as PROBE_ALLOW_CIDRS does), signing, journal and publication. The crawl runs
 * in a process of its own with the Node flags of `npm run crawl` (`_lib/crawl-process.ts`), and the fleet in
 * another (`_lib/crawl-fleet.ts`), as sellers are remote in production, so neither's CPU or memory is counted in
 * the other. Knobs: BENCH_CRAWL_ENDPOINTS (10000), BENCH_CRAWL_HOSTS (500); BENCH_CPU_PROF=<dir> profiles the crawl;
 * BENCH_CRAWL_NODE_FLAGS replaces the script's Node flags (`BENCH_CRAWL_NODE_FLAGS=` runs the crawl without any).
 */

import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLEET_WALLET } from '../sandbox/sellers/constants.ts';
import type { FleetHost } from './_lib/crawl-fleet.ts';
import { type CrawlMeasured, crawlNodeFlags } from './_lib/crawl-process.ts';
import { removeLater } from './_lib/processes.ts';
import { intEnv, type Result } from './_lib/result.ts';

/** Forks a bench helper (a module of `bench/_lib/`) under tsx. */
export function forkHelper(module: string, flags: string[] = []): ChildProcess {
  return fork(join(import.meta.dirname, '_lib', module), [], {
    execArgv: ['--import', 'tsx', ...flags],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Sends `message` and resolves with the first answer of `type`; rejects on `failed` or when the child exits. */
export function ask<T>(child: ChildProcess, message: object, type: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`bench helper exited (${signal ?? code}) before answering ${type}`));
    const on = (answer: { type?: string; message?: string }) => {
      if (answer.type === 'failed') reject(new Error(answer.message));
      if (answer.type !== type) return;
      child.off('message', on);
      child.off('exit', onExit);
      resolve(answer as T);
    };
    child.on('message', on);
    child.once('exit', onExit);
    child.send(message);
  });
}

/** Runs the bench. */
export async function run(): Promise<Result> {
  const endpoints = intEnv('BENCH_CRAWL_ENDPOINTS', 10_000);
  const hostCount = intEnv('BENCH_CRAWL_HOSTS', 500);
  const dir = await mkdtemp(join(tmpdir(), 'sc-bench-crawl-'));
  const children: ChildProcess[] = [];
  try {
    const fleet = forkHelper('crawl-fleet.ts');
    children.push(fleet);
    const hosts = (
      await ask<{ hosts: FleetHost[] }>(fleet, { type: 'start', hosts: hostCount }, 'hosts')
    ).hosts.map((h) => ({ ...h, n: 0 }));
    const listings = Array.from({ length: endpoints }, (_, i) => {
      const host = hosts[i % hostCount]!;
      host.n++;
      return { url: `${host.origin}/item/${i}`, source: 'bench', price_usd: 0.01, pay_to: FLEET_WALLET };
    });
    const listingsFile = join(dir, 'listings.json');
    await writeFile(listingsFile, JSON.stringify(listings));
    const bound = Math.max(...hosts.map((h) => Math.ceil(h.n / 3) * h.latencyMs));

    // BENCH_CRAWL_NODE_FLAGS (space-separated, may be empty) replaces the script's flags, to compare.
    const override = process.env.BENCH_CRAWL_NODE_FLAGS;
    const nodeFlags =
      override === undefined
        ? await crawlNodeFlags(join(import.meta.dirname, '..'))
        : override.split(/\s+/).filter((flag) => flag !== '');
    const profile = process.env.BENCH_CPU_PROF;
    const crawler = forkHelper(
      'crawl-process.ts',
      profile ? [...nodeFlags, '--cpu-prof', `--cpu-prof-dir=${profile}`] : nodeFlags,
    );
    children.push(crawler);
    const m = await ask<CrawlMeasured>(crawler, { type: 'crawl', listingsFile, dataDir: dir }, 'measured');
    // A profile is written as the process exits.
    const exited = new Promise((resolve) => crawler.once('exit', resolve));
    crawler.disconnect();
    await exited;
    const seen = await ask<{ maxInFlight: number; paymentHeaders: number; connections: number }>(
      fleet,
      { type: 'stats' },
      'stats',
    );
    const ratio = m.probingMs / bound;
    const cpuMsPerProbe = m.probingCpuUs / 1000 / m.total;
    const threadMsPerProbe = m.probingThreadUs / 1000 / m.total;
    const gcMsPerProbe = m.probingGcMs / m.total;
    const peakRssMiB = m.peakRssBytes / 2 ** 20;
    // Anything but price_ok means the machine could not keep up (a probe timed out or a host was refused).
    const summary = JSON.parse(await readFile(join(m.runPath, 'summary.json'), 'utf8')) as {
      reasons: Record<string, number>;
    };
    const notOk = Object.entries(summary.reasons).filter(([reason, n]) => reason !== 'price_ok' && n > 0);
    if (notOk.length > 0)
      console.log(`probes not answered price_ok: ${JSON.stringify(Object.fromEntries(notOk))}`);
    const load = loadavg()
      .map((n) => n.toFixed(2))
      .join(' ');
    console.log(
      `crawl: ${m.total} endpoints on ${hostCount} hosts; probing ${(m.probingMs / 1000).toFixed(2)} s against a bound of ${(bound / 1000).toFixed(2)} s (×${ratio.toFixed(3)}); whole run ${(m.totalMs / 1000).toFixed(2)} s; CPU ${cpuMsPerProbe.toFixed(3)} ms per probe (main thread ${threadMsPerProbe.toFixed(3)}, GC pauses ${gcMsPerProbe.toFixed(3)}); machine ${m.probingMachineBusyPct.toFixed(0)} % busy; peak RSS ${peakRssMiB.toFixed(0)} MiB; connections ${seen.connections}; most in flight at one host ${seen.maxInFlight}; payment headers ${seen.paymentHeaders}; load ${load}`,
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
        { name: 'probing wall time', value: Math.round(m.probingMs), unit: 'ms' },
        { name: 'per-host lower bound', value: bound, unit: 'ms' },
        {
          name: 'whole run (sources, probing, files, publication)',
          value: Math.round(m.totalMs),
          unit: 'ms',
        },
        {
          name: 'CPU of the crawl process per probe (user + system, every thread, during the probing)',
          value: Number(cpuMsPerProbe.toFixed(3)),
          unit: 'ms',
        },
        {
          name: 'CPU of the crawl main thread per probe (the probes, signing and GC pauses)',
          value: Number(threadMsPerProbe.toFixed(3)),
          unit: 'ms',
        },
        {
          name: 'GC pauses of the crawl main thread per probe',
          value: Number(gcMsPerProbe.toFixed(3)),
          unit: 'ms',
        },
        {
          name: 'machine busy during the probing (every process, the fleet too; all cores)',
          value: Math.round(m.probingMachineBusyPct),
          unit: '%',
        },
        {
          name: 'peak RSS of the crawl process (the fleet runs in its own)',
          value: Math.round(peakRssMiB),
          unit: 'MiB',
          target: { max: 400 },
        },
        { name: 'connections the fleet accepted', value: seen.connections, unit: 'connections' },
        {
          name: 'most requests in flight at one host',
          value: seen.maxInFlight,
          unit: 'requests',
          target: { max: 3 },
        },
        {
          name: 'payment headers the fleet saw',
          value: seen.paymentHeaders,
          unit: 'headers',
          target: { max: 0 },
        },
      ],
      notes: [
        `${endpoints} endpoints on ${hostCount} hosts, host latency 200-1000 ms; default concurrency (3 per host, at most 2048)`,
        `crawl process flags (${override === undefined ? 'package.json "crawl"' : 'BENCH_CRAWL_NODE_FLAGS'}): ${nodeFlags.join(' ') || 'none'}; V8 heap limit ${(m.heapLimitBytes / 2 ** 20).toFixed(0)} MiB`,
        `load average (1, 5, 15 min) at the end: ${load}`,
        `probes not answered price_ok: ${notOk.length === 0 ? 'none' : JSON.stringify(Object.fromEntries(notOk))}`,
      ],
    };
  } finally {
    for (const child of children) child.kill();
    removeLater(dir);
  }
}
