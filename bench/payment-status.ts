/**
 * Issue "Payment status from the chain" item 7: status latency on the sandbox (p50, p99) and RPC calls per query.
 *
 * Method: `startWorld()` (anvil with Circle's FiatToken, two RPC endpoints), each RPC endpoint behind a timing proxy
 * so every JSON-RPC request the service makes is counted; the service (`api/main.ts`, own process) reads through
 * the two proxies. Two authorizations: one submitted by the relayer (`landed`) and one signed and never submitted
 * (`pending`). Each is asked BENCH_STATUS_N times (default 100) one after the other with an exempt key, so the free
 * quota never interferes; RPC calls per query are the proxies' request count divided by the queries.
 */
import { performance } from 'node:perf_hooks';
import { signAuthorization, submitAuthorization, v2PaymentHeader } from '../sandbox/eip3009.ts';
import { startWorld, type World } from '../sandbox/world.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, summarize } from './_lib/stats.ts';
import { startTimingProxy, type TimingProxy } from './_lib/timing-proxy.ts';

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const n = intEnv('BENCH_STATUS_N', 100);
  console.log(
    `\n== payment-status: ${n} queries of a landed and of a pending authorization, two RPC sources ==`,
  );
  let world: World | null = null;
  const proxies: TimingProxy[] = [];
  let service: BenchService | null = null;
  try {
    world = await startWorld();
    for (const url of world.state.rpcUrls.slice(0, 2)) proxies.push(await startTimingProxy(url));
    service = await startService({ RPC_URLS: proxies.map((proxy) => proxy.url).join(',') });

    const buyer = world.chain.accounts.buyers[0]!;
    const head = await world.chain.publicClient.getBlock();
    const validBefore = head.timestamp + 3600n;
    const landed = await signAuthorization(buyer, { to: world.sellers.payTo, value: 10_000n, validBefore });
    const hash = await submitAuthorization(world.chain, landed.auth, landed.signature);
    await world.chain.publicClient.waitForTransactionReceipt({ hash });
    const pending = await signAuthorization(buyer, { to: world.sellers.payTo, value: 10_000n, validBefore });

    const ask = async (payload: string, expected: string) => {
      const started = performance.now();
      const res = await fetch(`${service!.url}/v1/products/payment-status`, {
        method: 'POST',
        headers: { ...service!.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ payment_payload: payload }),
      });
      const body = (await res.json()) as { status?: string };
      const ms = performance.now() - started;
      if (res.status !== 200 || body.status !== expected) {
        throw new Error(
          `bench: expected ${expected}, got ${res.status} ${JSON.stringify(body).slice(0, 200)}`,
        );
      }
      return ms;
    };
    const measure = async (payload: string, expected: string) => {
      await ask(payload, expected);
      for (const proxy of proxies) proxy.timings.length = 0;
      const samples: number[] = [];
      for (let i = 0; i < n; i++) samples.push(await ask(payload, expected));
      const calls = proxies.reduce((sum, proxy) => sum + proxy.timings.length, 0) / n;
      return { latency: summarize(samples), calls };
    };
    const landedRun = await measure(v2PaymentHeader(landed.auth, landed.signature), 'landed');
    const pendingRun = await measure(v2PaymentHeader(pending.auth, pending.signature), 'pending');

    console.log(line('landed ', landedRun.latency));
    console.log(line('pending', pendingRun.latency));
    console.log(`RPC calls per query (both sources): landed ${landedRun.calls}, pending ${pendingRun.calls}`);
    const figures: Figure[] = [
      { name: 'landed p50', value: round(landedRun.latency.p50), unit: 'ms' },
      { name: 'landed p99', value: round(landedRun.latency.p99), unit: 'ms' },
      { name: 'pending p50', value: round(pendingRun.latency.p50), unit: 'ms' },
      { name: 'pending p99', value: round(pendingRun.latency.p99), unit: 'ms' },
      { name: 'RPC calls per landed query', value: round(landedRun.calls), unit: 'calls' },
      { name: 'RPC calls per pending query', value: round(pendingRun.calls), unit: 'calls' },
    ];
    return {
      bench: 'payment-status',
      figures,
      notes: [
        `${n} sequential queries each, exempt key, two RPC sources (anvil directly and through the sandbox RPC proxy), each behind a counting proxy`,
        'each answer is a signed ps- receipt made durable (fsync) before it leaves',
      ],
    };
  } finally {
    await service?.stop();
    await service?.remove();
    for (const proxy of proxies) await proxy.close();
    await world?.stop();
  }
}
