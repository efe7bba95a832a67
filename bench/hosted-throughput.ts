/**
 * Target: "hosted cached-check throughput with key lookup, rate limiting and usage accounting on: >= 90 % of
 * the exempt cached-check throughput in the same run".
 *
 * Method: one service process (`api/main.ts`, journal fsync on) over a DATA_DIR prepared with one integrator and
 * BENCH_HOSTED_KEYS keys (default 2000, so the 120-per-minute limit of each key is never what stops the load). The
 * same closed-loop load (BENCH_CONNECTIONS connections) runs the exempt cached check, the hosted one twice (keys taken
 * round-robin, each answer journaling its use), then the exempt one again; the figure is the ratio of the summed
 * throughputs. The server's CPU per answer of each tier is printed beside it. Afterwards `/v1/integrators/me` must
 * count exactly the hosted answers.
 */
import { startSellers } from '../sandbox/sellers/index.ts';
import { seedIntegrator } from '../test/helpers/integrators.ts';
import { checkUrl, type Timed } from './_lib/http.ts';
import { type LoadOptions, type LoadResult, runLoad } from './_lib/load.ts';
import { serverCpuMs } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line } from './_lib/stats.ts';

const TARGET_RATIO_PCT = 90;

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const seconds = intEnv('BENCH_SECONDS', 8);
  const warmupSeconds = intEnv('BENCH_WARMUP_SECONDS', 2);
  const connections = intEnv('BENCH_CONNECTIONS', 32);
  const keyCount = intEnv('BENCH_HOSTED_KEYS', 2000);
  console.log(
    `\n== hosted-throughput: ${connections} connections, ${keyCount} keys, 2 x ${seconds} s per tier ==`,
  );
  const fleet = await startSellers();
  const keys: string[] = [];
  let service: BenchService | null = null;
  try {
    service = await startService({}, async (dataDir) => {
      keys.push(
        ...(await seedIntegrator(dataDir, 'bench', { keys: keyCount, creditLimitAtomic: '1000000000000' })),
      );
    });
    const url = checkUrl(service.url, fleet.urls['sdk-ok']);
    const prime = await fetch(url, { headers: service.headers });
    if (prime.status !== 200) throw new Error(`bench: priming check failed (${prime.status})`);
    const load = { connections, warmupMs: warmupSeconds * 1000, durationMs: seconds * 1000, url };
    let next = 0;
    let hostedAnswers = 0;
    const exempt: LoadResult[] = [];
    const hosted: LoadResult[] = [];
    // Server CPU (user + system, every thread, warm-up included) per accepted answer of each tier: what the hosted
    // path costs, seen another way than the throughput (on shared cores it is noisy too).
    const running = service;
    const cpu = { exempt: { ms: 0, answers: 0 }, hosted: { ms: 0, answers: 0 } };
    const segment = async (
      tier: 'exempt' | 'hosted',
      results: LoadResult[],
      options: Partial<LoadOptions>,
    ) => {
      const before = await running.stats();
      const result = await runLoad({ ...load, ...options, accept: (a) => cachedTier(a) === tier });
      const after = await running.stats();
      cpu[tier].ms += serverCpuMs(after, before);
      cpu[tier].answers += result.acceptedTotal;
      results.push(result);
    };
    const runExempt = () => segment('exempt', exempt, { headers: running.headers });
    const runHosted = () =>
      segment('hosted', hosted, {
        headersFor: () => ({ authorization: `Bearer ${keys[next++ % keys.length]}` }),
        onAnswer: () => hostedAnswers++,
      });
    // Exempt, hosted, hosted, exempt: both tiers get the same mean position in the run, so a drift of the machine or
    // of the service over the run counts against neither.
    for (const step of [runExempt, runHosted, runHosted, runExempt]) await step();
    for (const [label, results] of [
      ['exempt cached check', exempt],
      ['hosted cached check', hosted],
    ] as const)
      for (const result of results)
        console.log(
          `${line(label, result.latency)}  ${result.rps.toFixed(0)} req/s, ${result.errors} errors${result.firstError ? ` (${result.firstError})` : ''}`,
        );
    const rps = (results: LoadResult[]) => results.reduce((sum, r) => sum + r.rps, 0) / results.length;
    const ratio = (100 * rps(hosted)) / rps(exempt);
    const me = (await (
      await fetch(`${service.url}/v1/integrators/me`, { headers: { 'x-service-key': keys[0] ?? '' } })
    ).json()) as {
      current_month: { calls: number };
    };
    const counted = me.current_month.calls === hostedAnswers;
    const perAnswer = (tier: 'exempt' | 'hosted') => cpu[tier].ms / Math.max(1, cpu[tier].answers);
    console.log(
      `server CPU per answer: exempt ${perAnswer('exempt').toFixed(3)} ms, hosted ${perAnswer('hosted').toFixed(3)} ms ` +
        `(the hosted path adds ${((100 * perAnswer('hosted')) / perAnswer('exempt') - 100).toFixed(1)} %)`,
    );
    console.log(
      `ratio: ${ratio.toFixed(1)} % of the exempt check (target >= ${TARGET_RATIO_PCT} %: ${ratio >= TARGET_RATIO_PCT ? 'PASS' : 'MISS'}); ` +
        `usage: ${hostedAnswers} hosted answers, /v1/integrators/me counts ${me.current_month.calls}: ${counted ? 'OK' : 'MISMATCH'}`,
    );
    if (!counted) throw new Error('bench: hosted usage does not match the answers');
    const figures: Figure[] = [
      { name: 'exempt cached check', value: round(rps(exempt), 0), unit: 'req/s' },
      { name: 'hosted cached check', value: round(rps(hosted), 0), unit: 'req/s' },
      { name: 'hosted p50', value: round(hosted[1]?.latency.p50 ?? Number.NaN, 3), unit: 'ms' },
      { name: 'hosted / exempt ratio', value: round(ratio, 1), unit: '%', target: { min: TARGET_RATIO_PCT } },
      { name: 'exempt CPU per answer', value: round(perAnswer('exempt'), 3), unit: 'ms' },
      { name: 'hosted CPU per answer', value: round(perAnswer('hosted'), 3), unit: 'ms' },
    ];
    return {
      bench: 'hosted-throughput',
      figures,
      notes: [
        `${connections} connections, ${keyCount} keys round-robin, rounds of ${seconds} s in the order exempt, hosted, hosted, exempt, each after ${warmupSeconds} s warm-up`,
      ],
    };
  } finally {
    if (service) {
      await service.stop();
      await service.remove();
    }
    await fleet.close();
  }
}

/** The tier of a correct cached-check answer, else null. */
function cachedTier(answer: Timed): string | null {
  if (answer.status !== 200) return null;
  const body = JSON.parse(answer.body) as {
    verdict?: unknown;
    probe?: { cached?: unknown };
    access?: { tier?: unknown };
  };
  if (body.verdict !== 'pay' || body.probe?.cached !== true) return null;
  return typeof body.access?.tier === 'string' ? body.access.tier : null;
}
