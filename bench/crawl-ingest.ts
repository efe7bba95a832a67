/**
 * Target: "the running server takes the 50,000 receipts of a crawl run in with no live answer slower than 100 ms".
 *
 * Method: the service (`api/main.ts`, its own process, durable receipts) answers a closed loop of cached exempt checks
 * of one sandbox seller (BENCH_CONNECTIONS keep-alive connections, default 32, as `check-throughput`); beside it one
 * more connection asks, one request at a time, `GET /healthz` and `GET /v1/receipts` in turn (the reads a receipt
 * list makes of the index the ingest writes to). A published
 * crawl run of BENCH_INGEST_RECEIPTS signed receipts (default 50,000; the test fixture of the data contract) is
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
/** How long the bench waits for the server's marker after publishing the run. */
const INGEST_WAIT_MS = 600_000;

type Sample = { sent: number; ms: number; ok: boolean };

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const receipts = intEnv('BENCH_INGEST_RECEIPTS', 50_000);
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
    // Started first: right after 50,000 files were written, a start-up on a loaded machine outlasted the 30 s its
    // helper allows.
    service = await startService();
    const fixture = await writeCrawlFixture({
      dataDir: staging.dir,
      baseUrl: 'http://127.0.0.1:8402',
      finishedAt: new Date(),
      endpoints: receipts,
      hosts: 500,
    });
    console.log(`fixture run written (${fixture.runId}); the service is up`);
    const url = checkUrl(service.url, fleet.urls['sdk-ok']);
    const prime = await fetch(url, { headers: service.headers });
    if (prime.status !== 200) throw new Error(`bench: priming check failed (${prime.status})`);

    const samples: Sample[] = [];
    const reads: Record<'healthz' | 'list', Sample[]> = { healthz: [], list: [] };
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
    const readAgent = keepAliveAgent(1);
    const reader = async () => {
      const urls = {
        healthz: `${service!.url}/healthz`,
        list: `${service!.url}/v1/receipts?page=1&page_size=20`,
      };
      for (let turn = 0; !stop; turn++) {
        const kind = turn % 2 === 0 ? 'healthz' : 'list';
        const sent = performance.now();
        try {
          const answer = await timedGet(urls[kind], { agent: readAgent, headers: service!.headers });
          reads[kind].push({ sent, ms: answer.ms, ok: answer.status === 200 });
        } catch {
          reads[kind].push({ sent, ms: performance.now() - sent, ok: false });
        }
      }
    };
    const workers = Promise.all([...Array.from({ length: connections }, worker), reader()]);
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
    for (const deadline = published + INGEST_WAIT_MS; performance.now() < deadline; await sleep(20)) {
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
    readAgent.destroy();
    if (Number.isNaN(ingested))
      throw new Error(
        `bench: the run was not taken in within ${INGEST_WAIT_MS / 1000} s:\n${service.output()}`,
      );
    const load1 = loadavg();

    const overlapping = (list: Sample[]) =>
      list.filter((s) => s.sent + s.ms >= published && s.sent <= ingested);
    const during = overlapping(samples);
    const quiet = samples.filter((s) => s.sent >= before && s.sent + s.ms < published);
    const healthz = overlapping(reads.healthz);
    const list = overlapping(reads.list);
    const healthzS = summarize(healthz.filter((s) => s.ok).map((s) => s.ms));
    const listS = summarize(list.filter((s) => s.ok).map((s) => s.ms));
    const readErrors = [...healthz, ...list].filter((s) => !s.ok).length;
    const quietList = summarize(
      reads.list.filter((s) => s.ok && s.sent >= before && s.sent + s.ms < published).map((s) => s.ms),
    );
    const duringS = summarize(during.filter((s) => s.ok).map((s) => s.ms));
    const quietS = summarize(quiet.filter((s) => s.ok).map((s) => s.ms));
    const over = during.filter((s) => s.ms > LIMIT_MS).length;
    const errors = during.filter((s) => !s.ok).length;
    const ingestMs = ingested - published;
    console.log(line('checks before the ingest', quietS));
    console.log(line('checks during the ingest', duringS));
    console.log(line('GET /healthz during the ingest', healthzS));
    console.log(line('GET /v1/receipts before the ingest', quietList));
    console.log(line('GET /v1/receipts during the ingest', listS));
    console.log(
      `server event-loop delay: max ${quietLoop.loopDelayMaxMs.toFixed(1)} ms (p99 ${quietLoop.loopDelayP99Ms.toFixed(1)}) ` +
        `in the 3 s before, max ${ingestLoop.loopDelayMaxMs.toFixed(1)} ms (p99 ${ingestLoop.loopDelayP99Ms.toFixed(1)}) during the ingest`,
    );
    console.log(
      `ingest of ${receipts} receipts: ${(ingestMs / 1000).toFixed(2)} s from publication to the server's marker ` +
        `(polled every 2 s); ${over} of ${during.length} answers over ${LIMIT_MS} ms, ${errors} errors ` +
        `(reads: ${readErrors} errors); ` +
        `load average ${load0.map((n) => n.toFixed(2)).join(' ')} before, ${load1.map((n) => n.toFixed(2)).join(' ')} after`,
    );
    const figures: Figure[] = [
      {
        name: 'answer max during the ingest',
        value: round(duringS.max, 1),
        unit: 'ms',
        target: { max: LIMIT_MS },
      },
      {
        name: 'GET /healthz max during the ingest',
        value: round(healthzS.max, 1),
        unit: 'ms',
        target: { max: LIMIT_MS },
      },
      {
        name: 'GET /v1/receipts max during the ingest',
        value: round(listS.max, 1),
        unit: 'ms',
        target: { max: LIMIT_MS },
      },
      { name: 'GET /v1/receipts max before the ingest', value: round(quietList.max, 1), unit: 'ms' },
      { name: 'read errors during the ingest', value: readErrors, unit: 'answers', target: { max: 0 } },
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
        `reads one at a time beside them: ${healthz.length} GET /healthz, ${list.length} GET /v1/receipts`,
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
