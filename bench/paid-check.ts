/**
 * Issue "Sell through x402" item 8: a paid check end to end on the sandbox — 402, sign, verify, settle, answer.
 *
 * Method: `startWorld()` (anvil with Circle's FiatToken at the Base USDC address, the SDK facilitator over HTTP,
 * the seller fleet); the service (`api/main.ts`, own process) pointed at the facilitator through a timing proxy
 * written here. The bench uses up the free checks of its address (127.0.0.1) first, so every later check is
 * answered 402; then the official client (`wrapFetchWithPayment` from `@x402/fetch`, `x402Client` +
 * `ExactEvmScheme` with a funded buyer key) pays BENCH_PAID_N checks (default 40) one after the other. The
 * target URL is already in the probe cache, so the figures are the cost of selling, not of probing (the probe
 * cost is in `check-latency`). Split per check: total (as the buyer sees it), the unpaid 402 round trip, the
 * client's signing, the paid request, and inside it verify and settle as timed at the proxy; the service's own
 * time is the paid request minus verify and settle. Every settlement is then checked on chain.
 */

import { performance } from 'node:perf_hooks';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { startWorld, type World } from '../sandbox/world.ts';
import { checkUrl } from './_lib/http.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, type Summary, summarize } from './_lib/stats.ts';
import { startTimingProxy, type TimingProxy } from './_lib/timing-proxy.ts';

const FREE_CHECKS_LIMIT = 10;

type Parts = {
  total: number[];
  unpaid: number[];
  sign: number[];
  paid: number[];
  verify: number[];
  settle: number[];
  service: number[];
};

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const n = intEnv('BENCH_PAID_N', 40);
  const warmup = intEnv('BENCH_PAID_WARMUP', 3);
  console.log(`\n== paid-check: ${n} paid checks after ${warmup} warm-up payments ==`);
  let world: World | null = null;
  let proxy: TimingProxy | null = null;
  let service: BenchService | null = null;
  try {
    world = await startWorld();
    proxy = await startTimingProxy(world.state.facilitatorUrl);
    service = await startService({
      FACILITATOR_URL: proxy.url,
      SERVICE_WALLET: world.state.serviceWallet,
      RPC_URLS: world.state.rpcUrls.join(','),
    });
    const url = checkUrl(service.url, world.state.sellers['sdk-ok'] ?? '');
    const free = await useFreeChecks(url);
    const buyerKey = world.state.buyerKeys[0];
    if (!isHex(buyerKey)) throw new Error('bench: the world has no buyer key');

    const calls: number[] = [];
    const timedFetch: typeof fetch = async (input, init) => {
      const started = performance.now();
      const response = await fetch(input, init);
      const body = await response.arrayBuffer();
      calls.push(performance.now() - started);
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(buyerKey)));
    const pay = wrapFetchWithPayment(timedFetch, client);

    const parts: Parts = { total: [], unpaid: [], sign: [], paid: [], verify: [], settle: [], service: [] };
    const txs: `0x${string}`[] = [];
    let otherCalls = 0;
    for (let i = -warmup; i < n; i++) {
      calls.length = 0;
      proxy.timings.length = 0;
      const started = performance.now();
      const response = await pay(url);
      const body = (await response.json()) as {
        verdict?: unknown;
        access?: { tier?: unknown; tx?: unknown };
      };
      const total = performance.now() - started;
      if (response.status !== 200 || body.access?.tier !== 'paid' || typeof body.access.tx !== 'string')
        throw new Error(
          `bench: paid check ${i} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`,
        );
      const [unpaid, paid] = calls;
      const verify = sumOf(proxy, '/verify');
      const settle = sumOf(proxy, '/settle');
      if (calls.length !== 2 || unpaid === undefined || paid === undefined || verify === 0 || settle === 0)
        throw new Error(`bench: paid check ${i} did not go 402 → paid (${calls.length} requests)`);
      if (i < 0) continue;
      otherCalls += proxy.timings.filter((t) => t.path !== '/verify' && t.path !== '/settle').length;
      txs.push(body.access.tx as `0x${string}`);
      parts.total.push(total);
      parts.unpaid.push(unpaid);
      parts.sign.push(total - unpaid - paid);
      parts.paid.push(paid);
      parts.verify.push(verify);
      parts.settle.push(settle);
      parts.service.push(paid - verify - settle);
    }
    const landed = await countLanded(world, txs);
    return report(parts, { n, free, landed, txs: txs.length, otherCalls });
  } finally {
    if (service) {
      await service.stop();
      await service.remove();
    }
    await proxy?.close();
    await world?.stop();
  }
}

/** Sends unpaid checks until the service answers 402; returns how many were free. */
async function useFreeChecks(url: string): Promise<number> {
  for (let used = 0; used <= FREE_CHECKS_LIMIT; used++) {
    const response = await fetch(url);
    await response.arrayBuffer();
    if (response.status === 402) {
      if (!response.headers.get('payment-required')) throw new Error('bench: 402 without PAYMENT-REQUIRED');
      return used;
    }
    if (response.status !== 200) throw new Error(`bench: free check answered ${response.status}`);
  }
  throw new Error(`bench: still free after ${FREE_CHECKS_LIMIT} checks`);
}

function isHex(value: string | undefined): value is `0x${string}` {
  return value !== undefined && /^0x[0-9a-f]+$/i.test(value);
}

function sumOf(proxy: TimingProxy, path: string): number {
  return proxy.timings.filter((t) => t.path === path && t.status === 200).reduce((acc, t) => acc + t.ms, 0);
}

async function countLanded(world: World, txs: `0x${string}`[]): Promise<number> {
  let landed = 0;
  for (const hash of txs) {
    const receipt = await world.chain.publicClient.getTransactionReceipt({ hash });
    if (receipt.status === 'success') landed++;
  }
  return landed;
}

function report(
  parts: Parts,
  info: { n: number; free: number; landed: number; txs: number; otherCalls: number },
): Result {
  const s = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, summarize(v)])) as Record<
    keyof Parts,
    Summary
  >;
  console.log(line('total (buyer: 402, sign, pay)', s.total));
  console.log(line('  unpaid request → 402', s.unpaid));
  console.log(line('  client signs (EIP-3009)', s.sign));
  console.log(line('  paid request → 200', s.paid));
  console.log(line('    facilitator /verify', s.verify));
  console.log(line('    facilitator /settle (+ chain)', s.settle));
  console.log(line('    service own time', s.service));
  console.log(
    `${info.free} free checks used first; ${info.landed}/${info.txs} settlements found successful on chain; ` +
      `${info.otherCalls} facilitator calls besides verify/settle during the measured checks`,
  );
  if (info.landed !== info.txs) throw new Error('bench: a settlement is missing on chain');
  const figures: Figure[] = [];
  const add = (name: string, summary: Summary) => {
    figures.push({ name: `${name} p50`, value: round(summary.p50, 2), unit: 'ms' });
    figures.push({ name: `${name} p99`, value: round(summary.p99, 2), unit: 'ms' });
  };
  add('paid check total', s.total);
  add('unpaid 402', s.unpaid);
  add('client signing', s.sign);
  add('paid request', s.paid);
  add('facilitator verify', s.verify);
  add('facilitator settle', s.settle);
  add('service own time', s.service);
  return {
    bench: 'paid-check',
    figures,
    notes: [
      `${info.n} sequential paid checks of a cached URL; verify/settle timed at a proxy in front of the sandbox facilitator (anvil automine)`,
      'service own time = paid request - verify - settle (includes its HTTP client to the facilitator and the durable receipt)',
    ],
  };
}
