/**
 * The memory of a command and every process it starts, at once: `/proc` is sampled every `intervalMs` for the
 * root process and its descendants (found by parent id), and each sample sums their resident sets (`VmRSS`). The
 * largest sum is the command's simultaneous peak, as sampled; processes that overlap in time add up, processes that
 * run one after another do not. Between samples a process may rise and fall again, so each sample also sums every
 * live process's high-water mark so far (`VmHWM`, kept by the kernel): no moment up to that sample held more than
 * that, which bounds the peak from above. Linux only: elsewhere `watchTreeRss` returns null.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export type ProcessPeak = {
  pid: number;
  command: string;
  peakMb: number;
  /** CPU seconds (user and system) when last seen: a figure the machine's load moves less than wall time. */
  cpuS: number;
  firstMs: number;
  lastMs: number;
};

export type TreeRss = {
  /** The largest sum of the tree's resident sets in one sample. */
  peakMb: number;
  /** When it was sampled, in ms after the watch began. */
  peakAtMs: number;
  /** The largest sum, in one sample, of the live processes' high-water marks: an upper bound of the peak. */
  boundMb: number;
  /** Each process seen, with its own high-water mark and when it was seen first and last. */
  processes: ProcessPeak[];
  /** The CPU seconds of every process seen, added up. */
  cpuS: number;
  samples: number;
  intervalMs: number;
};

const MB = 1024;

/** Starts sampling the tree under `rootPid`; `stop()` takes a last sample and returns the figures. */
export function watchTreeRss(rootPid: number, intervalMs = 50): { stop(): TreeRss } | null {
  if (!existsSync('/proc/self/status')) return null;
  const started = performance.now();
  const seen = new Map<number, ProcessPeak>();
  let peakKb = 0;
  let peakAtMs = 0;
  let boundKb = 0;
  let samples = 0;
  const sample = () => {
    const now = performance.now() - started;
    let rss = 0;
    let hwm = 0;
    for (const pid of treePids(rootPid)) {
      const status = readProc(pid, 'status');
      if (status === null) continue;
      const vmRss = kbField(status, 'VmRSS');
      const vmHwm = kbField(status, 'VmHWM');
      const cpuS = cpuSeconds(readProc(pid, 'stat'));
      rss += vmRss;
      hwm += vmHwm;
      const known = seen.get(pid);
      if (known) {
        known.peakMb = Math.max(known.peakMb, Math.round(vmHwm / MB));
        known.lastMs = Math.round(now);
        known.cpuS = Math.max(known.cpuS, cpuS);
      } else {
        const command = (readProc(pid, 'cmdline') ?? '').split('\0').filter(Boolean).join(' ');
        seen.set(pid, {
          pid,
          command,
          peakMb: Math.round(vmHwm / MB),
          cpuS,
          firstMs: Math.round(now),
          lastMs: Math.round(now),
        });
      }
    }
    samples++;
    if (rss > peakKb) {
      peakKb = rss;
      peakAtMs = Math.round(now);
    }
    boundKb = Math.max(boundKb, hwm);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return {
        peakMb: Math.round(peakKb / MB),
        peakAtMs,
        boundMb: Math.round(boundKb / MB),
        processes: [...seen.values()],
        cpuS: [...seen.values()].reduce((sum, p) => sum + p.cpuS, 0),
        samples,
        intervalMs,
      };
    },
  };
}

/** `rootPid` and its living descendants, from every process's parent id. */
function treePids(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProc(Number(name), 'stat');
    if (stat === null) continue;
    const ppid = Number(statFields(stat)?.[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const queue = [rootPid];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * CPU (user + system) of `rootPid` and its living descendants so far, in ms, with the time of the children the root
 * has already waited for (a PostgreSQL server's ended backends). Linux only.
 */
export function treeCpuMs(rootPid: number): number {
  let ticks = 0;
  for (const pid of treePids(rootPid)) {
    const fields = statFields(readProc(pid, 'stat'));
    if (fields === null) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
    if (pid === rootPid) ticks += Number(fields[13]) + Number(fields[14]);
  }
  return ticks * 10;
}

/** Fields 14 and 15 of `/proc/<pid>/stat` (user and system time), in clock ticks of 1/100 s on Linux. */
function cpuSeconds(stat: string | null): number {
  const fields = statFields(stat);
  return fields === null ? 0 : (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The fields of `/proc/<pid>/stat` after the command name, which may hold spaces and parentheses: index 1 is the
 * parent id, 11 and 12 user and system time, 13 and 14 those of waited-for children (clock ticks of 1/100 s).
 */
function statFields(stat: string | null): string[] | null {
  return stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function readProc(pid: number, file: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null; // the process has exited meanwhile
  }
}

function kbField(status: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
}

/** The processes of a watch that held at least `minMb`, largest first, as one line each. */
export function describePeaks(tree: TreeRss, minMb = 20): string[] {
  return tree.processes
    .filter((p) => p.peakMb >= minMb)
    .sort((a, b) => b.peakMb - a.peakMb)
    .map(
      (p) =>
        `  ${String(p.peakMb).padStart(5)} MB  ${p.cpuS.toFixed(1).padStart(5)} s CPU  ${(p.firstMs / 1000).toFixed(1)}–${(p.lastMs / 1000).toFixed(1)} s  ${p.command.slice(0, 110)}`,
    );
}
