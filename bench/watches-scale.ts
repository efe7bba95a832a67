/**
 * Watches at scale: 100,000 watches over the endpoints of 5,000 loopback hosts (`_lib/watch-fleet.ts`, its own
 * process), probed by the real watcher of the real service (`api/main.ts`, its own process, `WATCH_INTERVAL_S`,
 * the SSRF gate with loopback allowed as PROBE_ALLOW_CIDRS allows it). The watches are written into the service's
 * watch store before it starts (`_lib/watch-seed.ts`), each endpoint first due at a point spread over the first
 * interval, as watches made over time would be. Measured over 1.5 intervals (`BENCH_WATCH_RUN_S`, at least 1.2):
 * - the longest time between two probes of one endpoint, in intervals (target ≤ 1.1): the first probe counts from
 *   one interval before its seeded due time, and an endpoint not probed by the end counts from its last probe;
 * - the service's peak RSS (target ≤ 500 MiB);
 * - the data folder's growth while every probe is unchanged (from the end of the first probes, which each write a
 *   receipt, to the end of the run), per probe, extrapolated to a day of the same endpoints (target ≤ 50 MiB).
 * Knobs: BENCH_WATCHES (100000), BENCH_WATCH_HOSTS (5000), BENCH_WATCH_ENDPOINTS (distinct endpoints, 100000),
 * BENCH_WATCH_INTERVAL_S (600), BENCH_WATCH_RUN_S (how long the run lasts from the first due time, 1.5 intervals).
 * 10,000 endpoints at 60 s is the same probe rate as 100,000 at 600 s. A day's growth is best read from a long run
 * at a reduced scale (e.g. 1,000 endpoints at 10 s for 600 s: 60 intervals, tens of thousands of unchanged probes,
 * several of DuckDB's checkpoints folding the write-ahead log into the database file), extrapolated per probe.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { intEnv, type Result, round } from './_lib/result.ts';
import { startService } from './_lib/service.ts';
import type { FleetHost } from './_lib/watch-fleet.ts';
import { type SeedEndpoint, seedWatches } from './_lib/watch-seed.ts';
import { ask, forkHelper } from './crawl.ts';

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** Runs the bench. */
// long: one measured scenario read top to bottom: set-up, the run with its samples, the figures
export async function run(): Promise<Result> {
  const watchCount = intEnv('BENCH_WATCHES', 100_000);
  const hostCount = intEnv('BENCH_WATCH_HOSTS', 5_000);
  const endpointCount = Math.min(intEnv('BENCH_WATCH_ENDPOINTS', 100_000), watchCount);
  const intervalS = intEnv('BENCH_WATCH_INTERVAL_S', 600);
  const intervalMs = intervalS * 1000;
  const runMs = intEnv('BENCH_WATCH_RUN_S', Math.round(1.5 * intervalS)) * 1000;
  const loadAtStart = load();
  const children: ChildProcess[] = [];
  const fleet = forkHelper('watch-fleet.ts');
  children.push(fleet);
  try {
    const { hosts } = await ask<{ hosts: FleetHost[] }>(
      fleet,
      { type: 'start', hosts: hostCount, minMs: 50, maxMs: 250 },
      'hosts',
    );
    // Seeded due times start a little after the service is up (its start-up is not the watcher's lateness).
    const t0 = Date.now() + 90_000;
    const endpoints: SeedEndpoint[] = Array.from({ length: endpointCount }, (_, i) => ({
      url: `${(hosts[i % hostCount] as FleetHost).origin}/e/${Math.floor(i / hostCount)}`,
      watches: Math.floor(watchCount / endpointCount) + (i < watchCount % endpointCount ? 1 : 0),
      webhookUrl: null,
      dueMs: t0 + Math.floor(((i * 0.6180339887) % 1) * intervalMs),
    }));
    const dueOf = new Map(endpoints.map((e) => [e.url, e.dueMs]));
    let seeded = 0;
    const service = await startService({ WATCH_INTERVAL_S: String(intervalS) }, async (dir) => {
      seeded = await seedWatches(dir, endpoints, Date.now());
    });
    try {
      const idle = await service.stats();
      console.log(
        `watches-scale: ${seeded} watches on ${endpointCount} endpoints of ${hostCount} hosts, interval ${intervalS} s; service up ${Math.round((t0 - Date.now()) / 1000)} s before the first due time (RSS ${mib(idle.rss)} MiB); load ${load()}`,
      );
      const endAt = t0 + Math.max(runMs, 1.2 * intervalMs);
      // Every first probe is due before t0 + interval; after 1.1 intervals every later probe is an unchanged one. A
      // long run (a day's growth) starts its window a quarter in, so first probes a loaded machine made late are out.
      const steadyAt = t0 + Math.max(1.1 * intervalMs, (endAt - t0) / 4);
      let steady: { at: number; bytes: number; probes: number; files: Map<string, number> } | null = null;
      let peakRss = 0;
      let stalls = 0;
      while (Date.now() < endAt) {
        await new Promise((r) => setTimeout(r, 5_000));
        // A stats request the service does not answer within 5 s is counted: its event loop was held that long.
        const now = await service.stats().catch(() => null);
        if (now === null) stalls++;
        else peakRss = Math.max(peakRss, now.maxRss);
        if (steady === null && Date.now() >= steadyAt) {
          const { probes } = await ask<{ probes: number }>(fleet, { type: 'count' }, 'count');
          const files = await fileSizes(service.dataDir);
          steady = { at: Date.now(), bytes: sum(files), probes, files };
          console.log(
            `  steady from +${Math.round((steady.at - t0) / 1000)} s: ${mib(steady.bytes)} MiB, ${probes} probes, load ${load()}`,
          );
        }
      }
      const endFiles = await fileSizes(service.dataDir);
      const end = { at: Date.now(), bytes: sum(endFiles) };
      // The write-ahead logs are folded into their databases at each checkpoint: what they hold is not growth.
      const lasting = (files: Map<string, number>) => sum(files, (name) => !name.endsWith('.wal'));
      const seen = await ask<{
        times: Record<string, number[]>;
        maxInFlight: number;
        paymentHeaders: number;
      }>(fleet, { type: 'times' }, 'times');
      const stats = await until(() => service.stats());
      peakRss = Math.max(peakRss, stats.maxRss);
      let worst = 0;
      let probesTotal = 0;
      let lateEndpoints = 0;
      // Probes in the steady window: the repeated ones (unchanged), and first ones that were still being made.
      let repeated = 0;
      let firstsInWindow = 0;
      for (const e of endpoints) {
        const list = seen.times[e.url] ?? [];
        probesTotal += list.length;
        for (const [i, t] of list.entries()) {
          if (steady === null || t < steady.at) continue;
          if (i === 0) firstsInWindow++;
          else repeated++;
        }
        let previous = (dueOf.get(e.url) ?? t0) - intervalMs;
        let gap = 0;
        for (const t of list) {
          gap = Math.max(gap, t - previous);
          previous = t;
        }
        gap = Math.max(gap, end.at - previous);
        if (gap > 1.1 * intervalMs) lateEndpoints++;
        worst = Math.max(worst, gap);
      }
      const unchangedProbes = firstsInWindow === 0 ? repeated : 0;
      if (firstsInWindow > 0)
        console.log(
          `  the steady window held ${firstsInWindow} first probes (each writes a receipt) beside ${repeated} repeated ones: the growth of unchanged probes is not measured`,
        );
      const growth = steady === null ? 0 : lasting(endFiles) - lasting(steady.files);
      const grew = [...endFiles]
        .map(([name, size]) => [name, size - (steady?.files.get(name) ?? 0)] as const)
        .filter(([, d]) => d !== 0)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([name, d]) => `${name} ${d > 0 ? '+' : ''}${d}`)
        .join(', ');
      console.log(
        `  steady-window changes (bytes): ${grew}; heap ${mib(stats.heapUsed)} MiB, RSS ${mib(stats.rss)} MiB`,
      );
      const perDayMiB =
        unchangedProbes > 0
          ? ((growth / unchangedProbes) * endpointCount * (86_400 / intervalS)) / 2 ** 20
          : Number.NaN;
      if (steady !== null && unchangedProbes > 0)
        console.log(
          `  unchanged probes: ${unchangedProbes} in ${round((end.at - steady.at) / 1000, 0)} s, lasting growth ${growth} bytes (${round(growth / unchangedProbes, 2)} a probe, ${round((growth / 2 ** 20) * (3_600_000 / (end.at - steady.at)), 2)} MiB an hour at this rate)`,
        );
      const files = [...endFiles]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([name, size]) => `${name} ${mib(size)} MiB`)
        .join(', ');
      // The service's CPU per probe (its DuckDB threads included) compares runs on a shared machine better than
      // the probes a second do.
      const cpuMs = stats.cpuUserMs + stats.cpuSystemMs;
      console.log(
        `  service CPU ${round(cpuMs / 1000, 1)} s in all, ${round(cpuMs / Math.max(probesTotal, 1), 2)} ms a probe (start-up and first probes included)`,
      );
      console.log(
        `watches-scale: worst gap ${round(worst / intervalMs, 3)} intervals, ${lateEndpoints} endpoints over 1.1; ${probesTotal} probes (${unchangedProbes} unchanged, ${growth} bytes over them); peak RSS ${mib(peakRss)} MiB; most in flight at a host ${seen.maxInFlight}; payment headers ${seen.paymentHeaders}; folder ${mib(end.bytes)} MiB (${files}); load ${loadAtStart} -> ${load()}`,
      );
      return {
        bench: 'watches-scale',
        figures: [
          {
            name: `longest time between two probes of one endpoint (${endpointCount} endpoints, ${seeded} watches, interval ${intervalS} s)`,
            value: round(worst / intervalMs, 3),
            unit: 'intervals',
            target: { max: 1.1 },
          },
          { name: 'endpoints probed later than 1.1 intervals', value: lateEndpoints, unit: 'endpoints' },
          { name: 'service peak RSS', value: round(peakRss / 2 ** 20, 0), unit: 'MiB', target: { max: 500 } },
          {
            name: 'data folder growth of unchanged probes, extrapolated to a day',
            value: round(perDayMiB, 2),
            unit: 'MiB',
            target: { max: 50 },
          },
          {
            name: 'most probes in flight at one host',
            value: seen.maxInFlight,
            unit: 'requests',
            target: { max: 3 },
          },
        ],
        notes: [
          `${seeded} watches on ${endpointCount} distinct endpoints of ${hostCount} hosts; interval ${intervalS} s; load ${loadAtStart} at the start, ${load()} at the end`,
          `stats requests not answered within 5 s (event loop held): ${stalls}`,
          `${probesTotal} probes, ${unchangedProbes} of them in the steady window (${growth} bytes of growth); payment headers seen ${seen.paymentHeaders}`,
        ],
      };
    } finally {
      await service.stop();
      await service.remove();
    }
  } finally {
    for (const child of children) child.kill();
  }
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

/** The apparent size of every file under `dir`, by path below it. */
async function fileSizes(dir: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    sizes.set(path.slice(dir.length + 1), (await stat(path).catch(() => ({ size: 0 }))).size);
  }
  return sizes;
}

function sum(files: Map<string, number>, keep: (name: string) => boolean = () => true): number {
  let total = 0;
  for (const [name, size] of files) if (keep(name)) total += size;
  return total;
}

/** `ask` again until the service answers (a held event loop makes one request time out). */
async function until<T>(ask: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await ask();
    } catch (error) {
      if (tries >= 12) throw error;
    }
  }
}
