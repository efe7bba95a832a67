/**
 * Target: "the challenge-bound check costs no more than the plain check plus 0.5 ms of CPU per answer".
 *
 * Method: the seller `sdk-ok` runs in this process; the service runs in its own process (`api/main.ts`, journal fsync
 * on, an exempt key so no quota interferes). The seller's own 402 is fetched once; its `PAYMENT-REQUIRED` value and
 * its first requirement are what a client would send back (`payment_required`, `selected_requirement`). One URL is
 * probed once, then blocks of BENCH_CHALLENGE_N sequential POST checks on one kept-alive connection alternate: plain,
 * then on the sent challenge, BENCH_CHALLENGE_ROUNDS times, every answer a cached-probe `pay` naming a fresh signed
 * receipt. The service's own CPU (user + system, all threads, read from the process) over each block, divided by
 * its answers, is the CPU per answer; "added" is the bound blocks' figure minus the plain blocks'.
 */
import { startSellers } from '../sandbox/sellers/index.ts';
import { keepAliveAgent, type Timed, timedPost } from './_lib/http.ts';
import { serverCpuMs } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, summarize } from './_lib/stats.ts';

const TARGET_ADDED_CPU_MS = 0.5;
const PATH = '/v1/products/endpoint-spot-check';

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const perBlock = intEnv('BENCH_CHALLENGE_N', 200);
  const rounds = intEnv('BENCH_CHALLENGE_ROUNDS', 4);
  console.log(`\n== check-challenge: ${rounds} rounds of ${perBlock} plain then ${perBlock} bound checks ==`);
  const fleet = await startSellers();
  const agent = keepAliveAgent(1);
  let service: BenchService | null = null;
  try {
    service = await startService();
    const url = `${fleet.urls['sdk-ok']}?challenge=1`;
    const unpaid = await fetch(url);
    const header = unpaid.headers.get('payment-required');
    if (unpaid.status !== 402 || header === null) throw new Error(`bench: sdk-ok answered ${unpaid.status}`);
    const required = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { accepts: unknown[] };
    const bodies = {
      plain: JSON.stringify({ url }),
      bound: JSON.stringify({ url, payment_required: header, selected_requirement: required.accepts[0] }),
    };
    const send = (body: string) =>
      timedPost(`${service!.url}${PATH}`, body, { agent, headers: service!.headers });
    // The probe, then a warm-up of both forms.
    for (let i = 0; i < 50; i++) {
      payAnswer(await send(bodies.plain));
      payAnswer(await send(bodies.bound));
    }
    const cpu = { plain: 0, bound: 0 };
    const samples = { plain: [] as number[], bound: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      for (const kind of ['plain', 'bound'] as const) {
        const before = await service.stats();
        for (let i = 0; i < perBlock; i++) samples[kind].push(payAnswer(await send(bodies[kind])).ms);
        cpu[kind] += serverCpuMs(await service.stats(), before);
      }
    }
    const answers = rounds * perBlock;
    const perAnswer = { plain: cpu.plain / answers, bound: cpu.bound / answers };
    const added = perAnswer.bound - perAnswer.plain;
    const s = { plain: summarize(samples.plain), bound: summarize(samples.bound) };
    console.log(line('plain check, cached probe', s.plain));
    console.log(line('check on a sent challenge, cached probe', s.bound));
    console.log(
      `service CPU per answer: plain ${perAnswer.plain.toFixed(3)} ms, bound ${perAnswer.bound.toFixed(3)} ms, ` +
        `added ${added.toFixed(3)} ms (target <= ${TARGET_ADDED_CPU_MS}: ${added <= TARGET_ADDED_CPU_MS ? 'PASS' : 'MISS'})`,
    );
    const figures: Figure[] = [
      fig('service CPU per plain check', perAnswer.plain),
      fig('service CPU per check on a sent challenge', perAnswer.bound),
      fig('CPU added by the sent challenge, per answer', added, { max: TARGET_ADDED_CPU_MS }),
      fig('plain check, cached, p50', s.plain.p50),
      fig('check on a sent challenge, cached, p50', s.bound.p50),
    ];
    return {
      bench: 'check-challenge',
      figures,
      notes: [
        `${rounds} alternating blocks of ${perBlock} sequential POST checks each, one request in flight`,
      ],
    };
  } finally {
    agent.destroy();
    if (service) {
      await service.stop();
      await service.remove();
    }
    await fleet.close();
  }
}

/** Every measured answer must be a cached-probe `pay`, the bound ones on the sent challenge. */
function payAnswer(answer: Timed): Timed {
  if (answer.status !== 200) throw new Error(`bench: check answered ${answer.status}: ${answer.body}`);
  const body = JSON.parse(answer.body) as { verdict?: unknown };
  if (body.verdict !== 'pay') throw new Error(`bench: expected pay, got ${answer.body.slice(0, 300)}`);
  return answer;
}

function fig(name: string, value: number, target?: { max: number }): Figure {
  return { name, value: round(value, 3), unit: 'ms', ...(target ? { target } : {}) };
}
