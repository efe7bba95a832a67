/**
 * Target: "ingest of a 10,000-receipt run into a server under check load without an answer over 100 ms".
 *
 * Method: the service (`api/main.ts`, its own process, durable receipts) answers a closed loop of cached exempt checks
 * of one sandbox seller (BENCH_CONNECTIONS keep-alive connections, default 32, as `check-throughput`). A published
 * crawl run of BENCH_INGEST_RECEIPTS signed receipts (default 10,000; the test fixture of the data contract) is
 * written beforehand into a staging folder, so writing and signing it costs the load generator nothing; after a
 * warm-up it is published into the service's DATA_DIR the way a crawl publishes (run folder renamed in, then
 * `current.json` replaced). The server's watcher takes it in; the bench waits for the server's marker
 * (`crawl/ingested.json`) naming the run, then for one more second. Every answer is timed with the time it was sent;
 * the figures are those of answers whose request overlapped the ingest (publication to marker), beside those of
 * the seconds before it.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startSellers } from '../sandbox/sellers/index.ts';
import { writeCrawlFixture } from '../test/fixtures/crawl-run.ts';
import { checkUrl, keepAliveAgent, timedGet } from './_lib/http.ts';
import { tempDataDir } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, summarize } from './_lib/stats.ts';

const LIMIT_MS = 100;

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const receipts = intEnv('BENCH_INGEST_RECEIPTS', 10_000);
  const connections = intEnv('BENCH_CONNECTIONS', 32);
  const warmupMs = intEnv('BENCH_WARMUP_SECONDS', 2) * 1000;
  console.log(
    `\n== crawl-ingest: ${receipts} receipts taken in under ${connections} connections of cached checks ==`,
  );
  const load0 = loadavg();
  const fleet = await startSellers();
  const staging = await tempDataDir('ingest-staging');
  let service: BenchService | null = null;
  try {
    const fixture = await writeCrawlFixture({
      dataDir: staging.dir,
      baseUrl: 'http://127.0.0.1:8402',
      finishedAt: new Date(),
      endpoints: receipts,
      hosts: 500,
    });
    console.log(`fixture run written (${fixture.runId}); starting the service`);
    service = await startService();
    const url = checkUrl(service.url, fleet.urls['sdk-ok']);
    const prime = await fetch(url, { headers: service.headers });
    if (prime.status !== 200) throw new Error(`bench: priming check failed (${prime.status})`);

    const samples: Array<{ sent: number; ms: number; ok: boolean }> = [];
    const agent = keepAliveAgent(connections);
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const sent = performance.now();
        try {
          const answer = await timedGet(url, { agent, headers: service!.headers });
          samples.push({ sent, ms: answer.ms, ok: answer.status === 200 });
        } catch {
          samples.push({ sent, ms: performance.now() - sent, ok: false });
        }
      }
    };
    const workers = Promise.all(Array.from({ length: connections }, worker));
    await sleep(warmupMs);
    await service.stats();
    const before = performance.now();
    await sleep(3000);
    const quietLoop = await service.stats();

    console.log(`${samples.length} answers so far; publishing the run`);
    const published = performance.now();
    await publishInto(staging.dir, service.dataDir, fixture.runId);
    const marker = join(service.dataDir, 'crawl', 'ingested.json');
    let ingested = Number.NaN;
    for (const deadline = published + 120_000; performance.now() < deadline; await sleep(20)) {
      const text = await readFile(marker, 'utf8').catch(() => '');
      if (text.includes(fixture.runId)) {
        ingested = performance.now();
        break;
      }
    }
    const ingestLoop = await service.stats();
    await sleep(1000);
    stop = true;
    await workers;
    agent.destroy();
    if (Number.isNaN(ingested))
      throw new Error(`bench: the run was not taken in within 120 s:\n${service.output()}`);
    const load1 = loadavg();

    const during = samples.filter((s) => s.sent + s.ms >= published && s.sent <= ingested);
    const quiet = samples.filter((s) => s.sent >= before && s.sent + s.ms < published);
    const duringS = summarize(during.filter((s) => s.ok).map((s) => s.ms));
    const quietS = summarize(quiet.filter((s) => s.ok).map((s) => s.ms));
    const over = during.filter((s) => s.ms > LIMIT_MS).length;
    const errors = during.filter((s) => !s.ok).length;
    const ingestMs = ingested - published;
    console.log(line('checks before the ingest', quietS));
    console.log(line('checks during the ingest', duringS));
    console.log(
      `server event-loop delay: max ${quietLoop.loopDelayMaxMs.toFixed(1)} ms (p99 ${quietLoop.loopDelayP99Ms.toFixed(1)}) ` +
        `in the 3 s before, max ${ingestLoop.loopDelayMaxMs.toFixed(1)} ms (p99 ${ingestLoop.loopDelayP99Ms.toFixed(1)}) during the ingest`,
    );
    console.log(
      `ingest of ${receipts} receipts: ${(ingestMs / 1000).toFixed(2)} s from publication to the server's marker ` +
        `(polled every 2 s); ${over} of ${during.length} answers over ${LIMIT_MS} ms, ${errors} errors; ` +
        `load average ${load0.map((n) => n.toFixed(2)).join(' ')} before, ${load1.map((n) => n.toFixed(2)).join(' ')} after`,
    );
    const figures: Figure[] = [
      {
        name: 'answer max during the ingest',
        value: round(duringS.max, 1),
        unit: 'ms',
        target: { max: LIMIT_MS },
      },
      { name: 'answer p99 during the ingest', value: round(duringS.p99, 1), unit: 'ms' },
      { name: 'answer p50 during the ingest', value: round(duringS.p50, 2), unit: 'ms' },
      { name: 'answers over 100 ms during the ingest', value: over, unit: 'answers', target: { max: 0 } },
      { name: 'answer max before the ingest', value: round(quietS.max, 1), unit: 'ms' },
      { name: 'answer p99 before the ingest', value: round(quietS.p99, 1), unit: 'ms' },
      { name: 'publication to ingested marker', value: Math.round(ingestMs), unit: 'ms' },
      {
        name: 'server event-loop delay max during the ingest',
        value: round(ingestLoop.loopDelayMaxMs, 1),
        unit: 'ms',
      },
      {
        name: 'server event-loop delay max before the ingest',
        value: round(quietLoop.loopDelayMaxMs, 1),
        unit: 'ms',
      },
    ];
    return {
      bench: 'crawl-ingest',
      figures,
      notes: [
        `${receipts} receipts, ${connections} connections of cached checks; ${during.length} answers overlapped the ingest, ${errors} errors`,
        `load average (1, 5, 15 min) ${load0.map((n) => n.toFixed(2)).join(' ')} before, ${load1.map((n) => n.toFixed(2)).join(' ')} after`,
      ],
    };
  } finally {
    if (service) {
      await service.stop();
      await service.remove();
    }
    await staging.remove();
    await fleet.close();
  }
}

/** Publishes a staged run into `dataDir` as a crawl does: the run folder renamed in, then `current.json` replaced. */
async function publishInto(stagingDir: string, dataDir: string, runId: string): Promise<void> {
  const from = join(stagingDir, 'crawl');
  const to = join(dataDir, 'crawl');
  await mkdir(join(to, 'runs'), { recursive: true });
  await rename(join(from, 'runs', runId), join(to, 'runs', runId));
  await writeFile(join(to, 'current.json.tmp'), await readFile(join(from, 'current.json')));
  await rename(join(to, 'current.json.tmp'), join(to, 'current.json'));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
