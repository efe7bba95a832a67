/**
 * Issue 9 target: "hosted cached-check throughput with key lookup, rate limiting and usage accounting on: >= 90 % of
 * the exempt cached-check throughput in the same run".
 *
 * Method: one service process (`api/main.ts`, journal fsync on) over a DATA_DIR prepared with one integrator and
 * BENCH_HOSTED_KEYS keys (default 2000, so the 120-per-minute limit of each key is never what stops the load). The
 * same closed-loop load (BENCH_CONNECTIONS connections) runs the exempt cached check, then the hosted one (keys taken
 * round-robin, each answer journaling its use), then both again; the figure is the ratio of the summed throughputs.
 * Afterwards `/v1/integrators/me` must count exactly the hosted answers.
 */
import { startSellers } from '../sandbox/sellers/index.ts';
import { seedIntegrator } from '../test/helpers/integrators.ts';
import { checkUrl, type Timed } from './_lib/http.ts';
import { type LoadResult, runLoad } from './_lib/load.ts';
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
    for (let round = 0; round < 2; round++) {
      exempt.push(
        await runLoad({ ...load, headers: service.headers, accept: (a) => cachedTier(a) === 'exempt' }),
      );
      hosted.push(
        await runLoad({
          ...load,
          headersFor: () => ({ authorization: `Bearer ${keys[next++ % keys.length]}` }),
          accept: (a) => cachedTier(a) === 'hosted',
          onAnswer: () => hostedAnswers++,
        }),
      );
    }
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
    ];
    return {
      bench: 'hosted-throughput',
      figures,
      notes: [
        `${connections} connections, ${keyCount} keys round-robin, two interleaved rounds of ${seconds} s per tier after ${warmupSeconds} s warm-up`,
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
