/**
 * Targets: cached-check throughput >= 80 % of the durable-signed floor in the same run (32
 * connections); the older ratio to a bare h3 route (>= 40 %) is still printed beside it.
 *
 * Method: three server processes started the same way (forked Node + tsx, node:http, h3's node adapter): a bare h3
 * app (`GET /ping` → `{"ok":true}`), the floor (`bench/_lib/floor-server.ts`: canonicalize a real check receipt with
 * a fresh id, sign it with Ed25519 through node:crypto, answer once its line is fdatasync'ed in a group-committed
 * journal) and the service (`api/main.ts`). The same closed-loop load generator (BENCH_CONNECTIONS keep-alive
 * connections, default 32) runs for BENCH_SECONDS (default 10) after a warm-up against the bare route once, then
 * against the floor and an exempt check of one seller URL already in the probe cache, alternating for
 * BENCH_THROUGHPUT_ROUNDS rounds (default 2) so both see the same machine. Afterwards the service is stopped and
 * its DATA_DIR is counted: one journal record and one receipt file per 200 answer, and a sample of receipt files is
 * verified with the auditors' verifier (`verify/verify.ts`) against the JWKS.
 */
import { join } from 'node:path';
import { startSellers } from '../sandbox/sellers/index.ts';
import { checkUrl } from './_lib/http.ts';
import { type LoadResult, runLoad } from './_lib/load.ts';
import {
  countDurable,
  type ServerProcess,
  type ServerStats,
  serverCpuMs,
  startServer,
  tempDataDir,
} from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, ms } from './_lib/stats.ts';
import { floorReceipt, receiptOf, verifySample, waitForFiles } from './_lib/throughput-checks.ts';

const TARGET_BARE_PCT = 40;
const TARGET_FLOOR_PCT = 80;

/** Load figures summed over rounds: requests per second is the mean of the rounds. */
type Leg = { rps: number[]; p50: number[]; p99: number[]; accepted: number; errors: number; cpuMs: number };
const newLeg = (): Leg => ({ rps: [], p50: [], p99: [], accepted: 0, errors: 0, cpuMs: 0 });
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const seconds = intEnv('BENCH_SECONDS', 10);
  const warmupSeconds = intEnv('BENCH_WARMUP_SECONDS', 2);
  const connections = intEnv('BENCH_CONNECTIONS', 32);
  const rounds = intEnv('BENCH_THROUGHPUT_ROUNDS', 2);
  console.log(
    `\n== check-throughput: ${connections} connections, ${warmupSeconds} s warm-up + ${seconds} s each, ${rounds} rounds of floor + check ==`,
  );
  const fleet = await startSellers();
  const floorData = await tempDataDir('floor');
  let bare: ServerProcess | null = null;
  let floor: ServerProcess | null = null;
  let service: BenchService | null = null;
  try {
    service = await startService();
    const load = { connections, warmupMs: warmupSeconds * 1000, durationMs: seconds * 1000 };
    const target = fleet.urls['sdk-ok'];
    const ids = new Set<string>();
    const prime = await fetch(checkUrl(service.url, target), { headers: service.headers });
    const primed = (await prime.json()) as { receipt_id?: unknown; probe?: { cached?: unknown } };
    if (prime.status !== 200 || primed.probe?.cached !== false || typeof primed.receipt_id !== 'string')
      throw new Error(`bench: priming check failed (${prime.status})`);
    ids.add(primed.receipt_id);
    const template = await floorReceipt(service.url, primed.receipt_id);

    bare = await startServer({ module: 'bench/_lib/bare-server.ts', readyPath: '/ping' });
    const bareBefore = await bare.stats();
    const bareResult = await runLoad({
      ...load,
      url: `${bare.url}/ping`,
      accept: (a) => a.status === 200 && a.body === '{"ok":true}',
    });
    const bareStats = await bare.stats();
    await bare.stop();
    print('bare h3 GET /ping', bareResult, bareStats, bareBefore);

    floor = await startServer({
      module: 'bench/_lib/floor-server.ts',
      readyPath: '/floor',
      env: { FLOOR_DATA_DIR: floorData.dir, FLOOR_RECEIPT: JSON.stringify(template) },
    });
    const floorLeg = newLeg();
    const checkLeg = newLeg();
    const syncs = { count: 0, ms: 0, records: 0 };
    const lag = { answered: 1, files: 0, behind: 0, drainMs: 0, cpuWithFilesMs: 0 };
    for (let r = 1; r <= rounds; r++) {
      const floorBefore = await floor.stats();
      const floorResult = await runLoad({
        ...load,
        url: `${floor.url}/floor`,
        accept: (a) => a.status === 200 && a.body.endsWith('"}') && a.body.includes('"signature":"'),
      });
      print(
        `floor (round ${r})`,
        floorResult,
        await addLeg(floorLeg, floorResult, floor, floorBefore),
        floorBefore,
      );

      const before = await service.stats();
      const recordsBefore = (await countDurable(service.dataDir)).journalRecords;
      const checkResult = await runLoad({
        ...load,
        url: checkUrl(service.url, target),
        headers: service.headers,
        accept: (a) => receiptOf(a) !== null,
        onAnswer: (a) => {
          const id = receiptOf(a);
          if (id) ids.add(id);
        },
      });
      const after = await addLeg(checkLeg, checkResult, service, before);
      const now = await countDurable(service.dataDir);
      lag.answered += checkResult.acceptedTotal;
      lag.files = now.receiptFiles;
      syncs.records += now.journalRecords - recordsBefore;
      syncs.count += after.datasync - before.datasync;
      syncs.ms += after.datasyncMs - before.datasyncMs;
      print(`service, cached check (round ${r})`, checkResult, after, before);
      // Files may trail the answers: wait for them, so the CPU they cost is counted too.
      const drainMs = await waitForFiles(join(service.dataDir, 'receipts'), lag.answered);
      const drained = await service.stats();
      lag.behind += lag.answered - lag.files;
      lag.drainMs += drainMs;
      lag.cpuWithFilesMs += serverCpuMs(drained, before);
      console.log(
        `${''.padEnd(34)} receipt files written when the load stopped: ${lag.files} of ${lag.answered}, all ${drainMs.toFixed(0)} ms later; ` +
          `CPU per answer with its file ${(serverCpuMs(drained, before) / Math.max(1, checkResult.acceptedTotal)).toFixed(3)} ms`,
      );
    }
    const serviceStats = await service.stats();
    await floor.stop();
    const floorRecords = (await countDurable(floorData.dir, { receipts: false })).journalRecords;
    const jwks: unknown = await (await fetch(`${service.url}/.well-known/jwks.json`)).json();

    await service.stop();
    const durable = await countDurable(service.dataDir);
    const answered = 1 + checkLeg.accepted;
    const verified = await verifySample(join(service.dataDir, 'receipts'), [...ids], jwks);
    const perSync = syncs.count > 0 ? syncs.records / syncs.count : Number.NaN;
    const syncMean = syncs.count > 0 ? syncs.ms / syncs.count : Number.NaN;
    const checkRps = mean(checkLeg.rps);
    const floorRps = mean(floorLeg.rps);
    const ratio = (100 * checkRps) / bareResult.rps;
    const floorRatio = (100 * checkRps) / floorRps;
    const durableOk =
      durable.journalRecords === answered && durable.receiptFiles === answered && ids.size === answered;
    const floorOk = floorRecords >= floorLeg.accepted;
    const pass = (value: number, min: number) => (value >= min ? 'PASS' : 'MISS');

    console.log(
      `cached check ${checkRps.toFixed(0)} req/s = ${floorRatio.toFixed(1)} % of the floor's ${floorRps.toFixed(0)} req/s ` +
        `(target >= ${TARGET_FLOOR_PCT} %: ${pass(floorRatio, TARGET_FLOOR_PCT)}), ${ratio.toFixed(1)} % of the bare route ` +
        `(target >= ${TARGET_BARE_PCT} %: ${pass(ratio, TARGET_BARE_PCT)})`,
    );
    console.log(
      `journal: ${syncs.records} records in ${syncs.count} fsyncs = ${perSync.toFixed(1)} receipts per fsync, mean fsync ${ms(syncMean)} ms`,
    );
    console.log(
      `durability: ${answered} answers 200 with a receipt id (${ids.size} distinct), ${durable.journalRecords} journal records, ` +
        `${durable.receiptFiles} receipt files: ${durableOk ? 'OK' : 'MISMATCH'}; ${verified.ok}/${verified.checked} sampled receipt files verify against the JWKS; ` +
        `floor: ${floorLeg.accepted} answers, ${floorRecords} journal lines: ${floorOk ? 'OK' : 'MISMATCH'}`,
    );
    if (!durableOk || !floorOk) throw new Error('bench: receipts on disk do not match the answers');
    if (verified.ok !== verified.checked) throw new Error('bench: a sampled receipt does not verify');

    const perAnswer = (leg: Leg) => leg.cpuMs / Math.max(1, leg.accepted);
    const figures: Figure[] = [
      { name: 'bare h3 route', value: round(bareResult.rps, 0), unit: 'req/s' },
      { name: 'bare h3 route p50', value: round(bareResult.latency.p50, 3), unit: 'ms' },
      { name: 'floor (durable signed)', value: round(floorRps, 0), unit: 'req/s' },
      { name: 'floor p50', value: round(mean(floorLeg.p50), 3), unit: 'ms' },
      { name: 'floor p99', value: round(mean(floorLeg.p99), 3), unit: 'ms' },
      { name: 'cached check', value: round(checkRps, 0), unit: 'req/s' },
      { name: 'cached check p50', value: round(mean(checkLeg.p50), 3), unit: 'ms' },
      { name: 'cached check p99', value: round(mean(checkLeg.p99), 3), unit: 'ms' },
      {
        name: 'check / floor ratio',
        value: round(floorRatio, 1),
        unit: '%',
        target: { min: TARGET_FLOOR_PCT },
      },
      { name: 'check / bare ratio', value: round(ratio, 1), unit: '%', target: { min: TARGET_BARE_PCT } },
      { name: 'bare CPU per answer', value: round(cpu(bareResult, bareStats, bareBefore), 3), unit: 'ms' },
      { name: 'floor CPU per answer', value: round(perAnswer(floorLeg), 3), unit: 'ms' },
      { name: 'check CPU per answer', value: round(perAnswer(checkLeg), 3), unit: 'ms' },
      { name: 'receipts per fsync', value: round(perSync, 1), unit: '' },
      { name: 'journal fsync mean', value: round(syncMean, 3), unit: 'ms' },
      { name: 'receipt files behind at load end', value: lag.behind, unit: '' },
      { name: 'time to write them', value: round(lag.drainMs, 0), unit: 'ms' },
      {
        name: 'check CPU per answer with its file',
        value: round(lag.cpuWithFilesMs / Math.max(1, checkLeg.accepted), 3),
        unit: 'ms',
      },
      { name: 'service RSS after load', value: round(serviceStats.rss / 2 ** 20, 0), unit: 'MiB' },
      { name: 'service peak RSS', value: round(serviceStats.maxRss / 2 ** 20, 0), unit: 'MiB' },
    ];
    return {
      bench: 'check-throughput',
      figures,
      notes: [
        `${connections} keep-alive connections, closed loop, ${seconds} s measured after ${warmupSeconds} s warm-up, ${rounds} alternating rounds of floor and check; load generator on the same cores`,
        `durable receipts: ${answered} answers = ${durable.journalRecords} journal records = ${durable.receiptFiles} files; errors bare ${bareResult.errors}, floor ${floorLeg.errors}, check ${checkLeg.errors}`,
      ],
    };
  } finally {
    await bare?.stop();
    await floor?.stop();
    if (service) {
      await service.stop();
      await service.remove();
    }
    await floorData.remove();
    await fleet.close();
  }
}

/** Adds one round to a leg; returns the server's stats after it. */
async function addLeg(leg: Leg, result: LoadResult, server: ServerProcess, before: ServerStats) {
  const after = await server.stats();
  leg.rps.push(result.rps);
  leg.p50.push(result.latency.p50);
  leg.p99.push(result.latency.p99);
  leg.accepted += result.acceptedTotal;
  leg.errors += result.errors;
  leg.cpuMs += serverCpuMs(after, before);
  return after;
}

function print(label: string, result: LoadResult, stats: ServerStats, before: ServerStats): void {
  console.log(line(label, result.latency));
  const perAnswer = cpu(result, stats, before);
  console.log(
    `${''.padEnd(34)} ${result.rps.toFixed(0)} req/s, ${result.errors} errors, server CPU ${perAnswer.toFixed(3)} ms per answer, ` +
      `RSS ${(stats.rss / 2 ** 20).toFixed(0)} MiB (peak ${(stats.maxRss / 2 ** 20).toFixed(0)} MiB)` +
      fsyncs(stats, before) +
      (result.firstError ? `, first error: ${result.firstError}` : ''),
  );
}

/** Server CPU time (user + system) over the whole load, warm-up included, per accepted answer, in ms. */
function cpu(result: LoadResult, after: ServerStats, before: ServerStats): number {
  return serverCpuMs(after, before) / Math.max(1, result.acceptedTotal);
}

/** The fdatasyncs between two stats: how many, and their mean (the floor's and the check's journals compared). */
function fsyncs(after: ServerStats, before: ServerStats): string {
  const count = after.datasync - before.datasync;
  if (count === 0) return '';
  return `, ${count} fdatasyncs of ${((after.datasyncMs - before.datasyncMs) / count).toFixed(2)} ms mean`;
}
