/**
 * Preloaded (`node --import`) into every server process a benchmark starts. It changes nothing the server does; it
 * counts and times `FileHandle.datasync`/`sync` (the journal's group commit is the only caller of `datasync` in
 * the service, so the count is the number of journal batches made durable) and answers `stats` requests from the
 * benchmark over the IPC channel with memory and CPU figures. When the benchmark goes away the channel closes and
 * the server is asked to stop (SIGTERM, its own graceful path), so no server outlives its benchmark.
 */
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** What a server process reports about itself. */
export type ServerStats = {
  pid: number;
  rss: number;
  /** Peak resident set size in bytes (`getrusage` maxrss). */
  maxRss: number;
  heapUsed: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  datasync: number;
  datasyncMs: number;
  sync: number;
  syncMs: number;
  /** The longest and the p99 event-loop delay since the previous stats request (10 ms resolution). */
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
};

const counters = { datasync: 0, datasyncMs: 0, sync: 0, syncMs: 0 };
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

// FileHandle is not exported as a class; its prototype is reached through an instance.
const probe = await open(process.execPath, 'r');
const proto = Object.getPrototypeOf(probe) as FileHandle;
await probe.close();

for (const name of ['datasync', 'sync'] as const) {
  const original = proto[name];
  proto[name] = async function timed(this: FileHandle): Promise<void> {
    const started = performance.now();
    try {
      return await original.call(this);
    } finally {
      counters[name]++;
      counters[`${name}Ms`] += performance.now() - started;
    }
  };
}

process.on('message', (message: unknown) => {
  if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== 'stats')
    return;
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  const stats: ServerStats = {
    pid: process.pid,
    rss: memory.rss,
    maxRss: process.resourceUsage().maxRSS * 1024,
    heapUsed: memory.heapUsed,
    cpuUserMs: cpu.user / 1000,
    cpuSystemMs: cpu.system / 1000,
    ...counters,
    loopDelayMaxMs: loopDelay.max / 1e6,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
  };
  loopDelay.reset();
  process.send?.({ type: 'stats', id: (message as { id?: unknown }).id, stats });
});
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
