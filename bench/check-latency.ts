/**
 * Issue target: "latency the service adds over a direct request to the same local seller (p50, p99) on a cache
 * miss and on a cache hit". Targets: added p50 <= 2 ms and p99 <= 10 ms on a cache miss.
 *
 * Method: the seller `sdk-ok` (the official SDK's Hono middleware) runs in this process; the service runs in its
 * own process (`api/main.ts`, real prober, journal fsync on). Each round sends, one after the other:
 * a direct GET to the seller on a kept-alive connection, a direct GET on a fresh connection (what a probe pays when
 * the seller had no connection left in the prober's pool), a check of a URL never checked before (`?i=<n>` makes
 * each one a cache miss; the seller still answers 402), and a check of one URL probed before (a cache hit).
 * Interleaving puts all four under the same conditions. "Added" is the percentile of the checks minus the same
 * percentile of the direct GETs (percentiles do not subtract exactly; the paired per-round difference is printed
 * beside it).
 */
import type { Agent } from 'node:http';
import { checkUrl, keepAliveAgent, type Timed, timedGet } from './_lib/http.ts';
import { missBreakdown } from './_lib/miss-breakdown.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { startSellerProcess } from './_lib/seller-process.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, ms, type Summary, summarize } from './_lib/stats.ts';

const TARGET_P50_MS = 2;
const TARGET_P99_MS = 10;

/** Runs the benchmark (BENCH_LATENCY_N rounds, default 400, after BENCH_LATENCY_WARMUP rounds, default 50). */
export async function run(): Promise<Result> {
  const rounds = intEnv('BENCH_LATENCY_N', 400);
  const warmup = intEnv('BENCH_LATENCY_WARMUP', 50);
  console.log(`\n== check-latency: ${rounds} rounds after ${warmup} warm-up rounds ==`);
  const fleet = await startSellerProcess();
  let service: BenchService | null = null;
  const toSeller = keepAliveAgent(1);
  const toService = keepAliveAgent(1);
  try {
    service = await startService();
    const seller = fleet.urls['sdk-ok'];
    await assertStillPaywalled(`${seller}?i=probe-check`, toSeller);
    const hitTarget = `${seller}?hit=1`;
    const first = await check(service, hitTarget, toService);
    if (first.probe.cached !== false) throw new Error('bench: the first check of the hit URL was cached');

    const samples = {
      direct: [] as number[],
      fresh: [] as number[],
      miss: [] as number[],
      hit: [] as number[],
    };
    const paired = { miss: [] as number[], hit: [] as number[] };
    let lastMiss = first.receiptId;
    let syncsBefore = 0;
    let syncMsBefore = 0;
    for (let i = -warmup; i < rounds; i++) {
      if (i === 0) {
        const stats = await service.stats();
        syncsBefore = stats.datasync;
        syncMsBefore = stats.datasyncMs;
      }
      const direct = await timedGet(`${seller}?i=${i}`, { agent: toSeller });
      const fresh = await timedGet(`${seller}?i=${i}`, { agent: false });
      if (direct.status !== 402 || fresh.status !== 402)
        throw new Error('bench: the seller did not answer 402');
      const miss = await check(service, `${seller}?i=${i}`, toService);
      if (miss.probe.cached !== false) throw new Error(`bench: check ${i} was not a cache miss`);
      lastMiss = miss.receiptId;
      const hit = await check(service, hitTarget, toService);
      if (hit.probe.cached !== true) throw new Error(`bench: check ${i} of the hit URL was not cached`);
      if (i < 0) continue;
      samples.direct.push(direct.ms);
      samples.fresh.push(fresh.ms);
      samples.miss.push(miss.ms);
      samples.hit.push(hit.ms);
      paired.miss.push(miss.ms - direct.ms);
      paired.hit.push(hit.ms - direct.ms);
    }
    const after = await service.stats();
    const syncs = after.datasync - syncsBefore;
    const syncMean = syncs > 0 ? (after.datasyncMs - syncMsBefore) / syncs : Number.NaN;
    const fetched: unknown = await (await fetch(`${service.url}/v1/receipts/${lastMiss}`)).json();
    if (typeof fetched !== 'object' || fetched === null || !('signature' in fetched))
      throw new Error(`bench: receipt ${lastMiss} could not be read back`);
    const receipt = fetched as Record<string, unknown>;
    await service.stop();

    const s = {
      direct: summarize(samples.direct),
      fresh: summarize(samples.fresh),
      miss: summarize(samples.miss),
      hit: summarize(samples.hit),
      pairedMiss: summarize(paired.miss),
      pairedHit: summarize(paired.hit),
    };
    print(s, syncs, syncMean, rounds);
    const added = (a: Summary, b: Summary) => ({ p50: a.p50 - b.p50, p99: a.p99 - b.p99 });
    const missAdded = added(s.miss, s.direct);
    const hitAdded = added(s.hit, s.direct);
    const missVsFresh = added(s.miss, s.fresh);
    const breakdownRounds = intEnv('BENCH_BREAKDOWN_N', 200);
    const parts = await missBreakdown(seller, receipt, breakdownRounds);
    console.log(
      `where a miss waits (diagnostic, service parts run in this process, ${breakdownRounds} rounds):`,
    );
    console.log(line('  probe (io/probe/prober.ts)', parts.probe));
    console.log(line('  index read after queued writes', parts.readAfterWrites));
    console.log(line('  index read, nothing queued', parts.readAlone));
    console.log(line('  journal append (fdatasync)', parts.journal));
    console.log(line('  reputation lookup', parts.reputation));
    const figures: Figure[] = [
      fig('direct GET p50 (keep-alive)', s.direct.p50),
      fig('direct GET p99 (keep-alive)', s.direct.p99),
      fig('check, cache miss p50', s.miss.p50),
      fig('check, cache miss p99', s.miss.p99),
      fig('added on a miss p50', missAdded.p50, { max: TARGET_P50_MS }),
      fig('added on a miss p99', missAdded.p99, { max: TARGET_P99_MS }),
      fig('added on a miss p50 (vs fresh conn.)', missVsFresh.p50),
      fig('added on a miss p99 (vs fresh conn.)', missVsFresh.p99),
      fig('check, cache hit p50', s.hit.p50),
      fig('check, cache hit p99', s.hit.p99),
      fig('added on a hit p50', hitAdded.p50),
      fig('added on a hit p99', hitAdded.p99),
      fig('journal fsync mean', syncMean),
      fig('miss stage: probe p50', parts.probe.p50),
      fig('miss stage: index flush+read p50', parts.readAfterWrites.p50),
      fig('miss stage: index flush+read p99', parts.readAfterWrites.p99),
      fig('miss stage: index read alone p50', parts.readAlone.p50),
      fig('miss stage: journal append p50', parts.journal.p50),
      fig('miss stage: reputation p50', parts.reputation.p50),
      fig('miss stage: reputation p99', parts.reputation.p99),
    ];
    return {
      bench: 'check-latency',
      figures,
      notes: [
        `${rounds} sequential rounds (one request in flight at a time); ${syncs} fsyncs for ${2 * rounds} checks`,
        'added = percentile(check) - percentile(direct keep-alive GET); a miss reuses the connection the miss before it left (the prober keeps a GET connection for 1 s); the fresh-connection baseline is what a probe pays without one',
      ],
    };
  } finally {
    toSeller.destroy();
    toService.destroy();
    if (service) {
      await service.stop();
      await service.remove();
    }
    await fleet.close();
  }
}

type Check = Timed & { verdict: unknown; receiptId: string; probe: { cached?: unknown } };

async function check(service: BenchService, target: string, agent: Agent): Promise<Check> {
  const answer = await timedGet(checkUrl(service.url, target), { agent, headers: service.headers });
  if (answer.status !== 200) throw new Error(`bench: check answered ${answer.status}: ${answer.body}`);
  const body = JSON.parse(answer.body) as {
    verdict?: unknown;
    receipt_id?: unknown;
    probe?: { cached?: unknown };
  };
  if (body.verdict !== 'pay' || typeof body.receipt_id !== 'string')
    throw new Error(`bench: expected verdict pay and a receipt, got ${answer.body.slice(0, 300)}`);
  return { ...answer, verdict: body.verdict, receiptId: body.receipt_id, probe: body.probe ?? {} };
}

/** The distinct query string must not change what the SDK seller answers: still a 402 with its challenge. */
async function assertStillPaywalled(url: string, agent: Agent): Promise<void> {
  const answer = await timedGet(url, { agent });
  if (answer.status !== 402 || typeof answer.headers['payment-required'] !== 'string')
    throw new Error(`bench: ${url} answered ${answer.status} without PAYMENT-REQUIRED`);
}

function fig(name: string, value: number, target?: { max: number }): Figure {
  return { name, value: round(value, 3), unit: 'ms', ...(target ? { target } : {}) };
}

function print(s: Record<string, Summary>, syncs: number, syncMean: number, rounds: number): void {
  const get = (k: string) => s[k] as Summary;
  console.log(line('direct GET, kept-alive connection', get('direct')));
  console.log(line('direct GET, fresh connection', get('fresh')));
  console.log(line('check, cache miss', get('miss')));
  console.log(line('check, cache hit', get('hit')));
  console.log(line('paired (miss - direct) per round', get('pairedMiss')));
  console.log(line('paired (hit - direct) per round', get('pairedHit')));
  const verdict = (value: number, limit: number) => (value <= limit ? 'PASS' : 'MISS');
  const addP50 = get('miss').p50 - get('direct').p50;
  const addP99 = get('miss').p99 - get('direct').p99;
  console.log(
    `added on a miss: p50 ${ms(addP50)} ms (target <= ${TARGET_P50_MS}: ${verdict(addP50, TARGET_P50_MS)}), ` +
      `p99 ${ms(addP99)} ms (target <= ${TARGET_P99_MS}: ${verdict(addP99, TARGET_P99_MS)})`,
  );
  console.log(
    `added on a hit:  p50 ${ms(get('hit').p50 - get('direct').p50)} ms, p99 ${ms(get('hit').p99 - get('direct').p99)} ms`,
  );
  console.log(`journal: ${syncs} fsyncs for ${2 * rounds} receipts, mean fsync ${ms(syncMean)} ms`);
  console.log(
    'method: rounds of [direct keep-alive, direct fresh, check miss (?i=<n>), check hit] in sequence; ' +
      'added = percentile(check) - percentile(direct keep-alive)',
  );
}
