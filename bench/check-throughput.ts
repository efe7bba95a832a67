/**
 * Issue target: "cached-check throughput beside a bare h3 route returning a small JSON, in the same run, as a
 * ratio" >= 40 %, "with every answer carrying a signed, durable receipt" (journal fsync on).
 *
 * Method: two server processes started the same way (forked Node + tsx, node:http, h3's node adapter): a bare
 * h3 app with `GET /ping` → `{"ok":true}`, and the service (`api/main.ts`). The same closed-loop load generator
 * (BENCH_CONNECTIONS keep-alive connections, default 32) runs against each for BENCH_SECONDS (default 10) after a
 * warm-up: the bare route, then an exempt check of one seller URL that is already in the probe cache. Afterwards
 * the service is stopped and its DATA_DIR is counted: one journal record and one receipt file per 200 answer,
 * and a sample of receipt files is verified with the auditors' verifier (`verify/verify.ts`) against the JWKS.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSellers } from '../sandbox/sellers/index.ts';
import { verifyReceipt } from '../verify/verify.ts';
import { checkUrl, type Timed } from './_lib/http.ts';
import { type LoadResult, runLoad } from './_lib/load.ts';
import { countDurable, type ServerProcess, type ServerStats, startServer } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, ms } from './_lib/stats.ts';

const TARGET_RATIO_PCT = 40;
const VERIFY_SAMPLE = 50;

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const seconds = intEnv('BENCH_SECONDS', 10);
  const warmupSeconds = intEnv('BENCH_WARMUP_SECONDS', 2);
  const connections = intEnv('BENCH_CONNECTIONS', 32);
  console.log(
    `\n== check-throughput: ${connections} connections, ${warmupSeconds} s warm-up + ${seconds} s each ==`,
  );
  const fleet = await startSellers();
  let bare: ServerProcess | null = null;
  let service: BenchService | null = null;
  try {
    bare = await startServer({ module: 'bench/_lib/bare-server.ts', readyPath: '/ping' });
    service = await startService();
    const load = { connections, warmupMs: warmupSeconds * 1000, durationMs: seconds * 1000 };

    const bareBefore = await bare.stats();
    const bareResult = await runLoad({
      ...load,
      url: `${bare.url}/ping`,
      accept: (a) => a.status === 200 && a.body === '{"ok":true}',
    });
    const bareStats = await bare.stats();
    await bare.stop();
    print('bare h3 GET /ping', bareResult, bareStats, bareBefore);

    const target = fleet.urls['sdk-ok'];
    const ids = new Set<string>();
    const prime = await fetch(checkUrl(service.url, target), { headers: service.headers });
    const primed = (await prime.json()) as { receipt_id?: unknown; probe?: { cached?: unknown } };
    if (prime.status !== 200 || primed.probe?.cached !== false || typeof primed.receipt_id !== 'string')
      throw new Error(`bench: priming check failed (${prime.status})`);
    ids.add(primed.receipt_id);

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
    const after = await service.stats();
    const recordsAfter = (await countDurable(service.dataDir)).journalRecords;
    print('service, cached check', checkResult, after, before);
    const jwks: unknown = await (await fetch(`${service.url}/.well-known/jwks.json`)).json();

    await service.stop();
    const durable = await countDurable(service.dataDir);
    const answered = 1 + checkResult.acceptedTotal;
    const verified = await verifySample(join(service.dataDir, 'receipts'), [...ids], jwks);
    const syncs = after.datasync - before.datasync;
    const perSync = syncs > 0 ? (recordsAfter - recordsBefore) / syncs : Number.NaN;
    const syncMean = syncs > 0 ? (after.datasyncMs - before.datasyncMs) / syncs : Number.NaN;
    const ratio = (100 * checkResult.rps) / bareResult.rps;
    const durableOk =
      durable.journalRecords === answered && durable.receiptFiles === answered && ids.size === answered;

    console.log(
      `ratio: ${ratio.toFixed(1)} % of the bare route (target >= ${TARGET_RATIO_PCT} %: ${ratio >= TARGET_RATIO_PCT ? 'PASS' : 'MISS'})`,
    );
    console.log(
      `journal: ${recordsAfter - recordsBefore} records in ${syncs} fsyncs = ${perSync.toFixed(1)} receipts per fsync, mean fsync ${ms(syncMean)} ms`,
    );
    console.log(
      `durability: ${answered} answers 200 with a receipt id (${ids.size} distinct), ${durable.journalRecords} journal records, ` +
        `${durable.receiptFiles} receipt files: ${durableOk ? 'OK' : 'MISMATCH'}; ${verified.ok}/${verified.checked} sampled receipt files verify against the JWKS`,
    );
    if (!durableOk) throw new Error('bench: receipts on disk do not match the answers');
    if (verified.ok !== verified.checked) throw new Error('bench: a sampled receipt does not verify');

    const figures: Figure[] = [
      { name: 'bare h3 route', value: round(bareResult.rps, 0), unit: 'req/s' },
      { name: 'bare h3 route p50', value: round(bareResult.latency.p50, 3), unit: 'ms' },
      { name: 'bare h3 route p99', value: round(bareResult.latency.p99, 3), unit: 'ms' },
      { name: 'cached check', value: round(checkResult.rps, 0), unit: 'req/s' },
      { name: 'cached check p50', value: round(checkResult.latency.p50, 3), unit: 'ms' },
      { name: 'cached check p99', value: round(checkResult.latency.p99, 3), unit: 'ms' },
      { name: 'check / bare ratio', value: round(ratio, 1), unit: '%', target: { min: TARGET_RATIO_PCT } },
      {
        name: 'bare CPU per answer',
        value: round(cpuPerAnswer(bareResult, bareStats, bareBefore), 3),
        unit: 'ms',
      },
      { name: 'check CPU per answer', value: round(cpuPerAnswer(checkResult, after, before), 3), unit: 'ms' },
      { name: 'receipts per fsync', value: round(perSync, 1), unit: '' },
      { name: 'journal fsync mean', value: round(syncMean, 3), unit: 'ms' },
      { name: 'service RSS after load', value: round(after.rss / 2 ** 20, 0), unit: 'MiB' },
      { name: 'service peak RSS', value: round(after.maxRss / 2 ** 20, 0), unit: 'MiB' },
      { name: 'bare peak RSS', value: round(bareStats.maxRss / 2 ** 20, 0), unit: 'MiB' },
    ];
    return {
      bench: 'check-throughput',
      figures,
      notes: [
        `${connections} keep-alive connections, closed loop, ${seconds} s measured after ${warmupSeconds} s warm-up; load generator on the same cores`,
        `durable receipts: ${answered} answers = ${durable.journalRecords} journal records = ${durable.receiptFiles} files; errors bare ${bareResult.errors}, check ${checkResult.errors}`,
      ],
    };
  } finally {
    await bare?.stop();
    if (service) {
      await service.stop();
      await service.remove();
    }
    await fleet.close();
  }
}

/** The receipt id of a correct cached-check answer (a `pay` verdict from the probe cache), else null. */
export function receiptOf(answer: Timed): string | null {
  if (answer.status !== 200) return null;
  const body = JSON.parse(answer.body) as {
    receipt_id?: unknown;
    verdict?: unknown;
    probe?: { cached?: unknown };
  };
  if (body.verdict !== 'pay' || body.probe?.cached !== true || typeof body.receipt_id !== 'string')
    return null;
  return body.receipt_id;
}

/** Verifies up to {@link VERIFY_SAMPLE} receipt files, spread over the run, with the auditors' verifier. */
async function verifySample(
  dir: string,
  ids: string[],
  jwks: unknown,
): Promise<{ checked: number; ok: number }> {
  const step = Math.max(1, Math.floor(ids.length / VERIFY_SAMPLE));
  let checked = 0;
  let ok = 0;
  for (let i = 0; i < ids.length && checked < VERIFY_SAMPLE; i += step) {
    const receipt: unknown = JSON.parse(await readFile(join(dir, `${ids[i]}.json`), 'utf8'));
    checked++;
    if ((await verifyReceipt(receipt, jwks)).ok) ok++;
  }
  return { checked, ok };
}

function print(label: string, result: LoadResult, stats: ServerStats, before: ServerStats): void {
  console.log(line(label, result.latency));
  const perAnswer = cpuPerAnswer(result, stats, before);
  console.log(
    `${''.padEnd(34)} ${result.rps.toFixed(0)} req/s, ${result.errors} errors, server CPU ${perAnswer.toFixed(3)} ms per answer, ` +
      `RSS ${(stats.rss / 2 ** 20).toFixed(0)} MiB (peak ${(stats.maxRss / 2 ** 20).toFixed(0)} MiB)` +
      (result.firstError ? `, first error: ${result.firstError}` : ''),
  );
}

/** Server CPU time (user + system) over the whole load, warm-up included, per accepted answer, in ms. */
function cpuPerAnswer(result: LoadResult, after: ServerStats, before: ServerStats): number {
  const cpuMs = after.cpuUserMs + after.cpuSystemMs - before.cpuUserMs - before.cpuSystemMs;
  return cpuMs / Math.max(1, result.acceptedTotal);
}
