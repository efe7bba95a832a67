/**
 * The guard (`packages/x402-guard`) in the payment path: what it adds to a paid request when Spotcheck already holds
 * a fresh probe of the seller.
 *
 * Method: `startWorld()` (anvil with Circle's FiatToken at the Base USDC address, the SDK facilitator, the seller
 * fleet) and the service (`api/main.ts`, own process, durable receipts). One unguarded check of `sdk-ok` fills
 * Spotcheck's probe cache; then, in interleaved rounds, the official client (`wrapFetchWithPayment` over `x402Client`
 * + `ExactEvmScheme`, a fresh client each request) pays `sdk-ok` ($0.01, verified and settled on chain) three ways:
 * without the guard; with a fresh guard, which asks Spotcheck about the exact challenge (answered from the probe
 * cache, a signed and journaled receipt each time); and with one long-lived guard, which reuses its approval while the
 * probe is fresh. The guard's own time is measured where it runs: between a hook registered just before the guard's
 * and one just after it (`onBeforePaymentCreation` hooks run in order), plus the `track()` wrapper's bookkeeping. The
 * end-to-end p50 difference is printed too; it carries the settlement's jitter.
 */
import { performance } from 'node:perf_hooks';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { attachGuard, type Guard, type GuardEvent } from '../packages/x402-guard/src/index.ts';
import { startWorld, type World } from '../sandbox/world.ts';
import { checkUrl } from './_lib/http.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { BENCH_KEY, type BenchService, startService } from './_lib/service.ts';
import { line, type Summary, summarize } from './_lib/stats.ts';

type Mode = 'plain' | 'asks' | 'reuses';
type Samples = Record<Mode, { total: number[]; guard: number[] }>;

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const n = intEnv('BENCH_GUARD_N', 60);
  const warmup = intEnv('BENCH_GUARD_WARMUP', 3);
  console.log(`\n== guard: ${n} paid requests each without the guard, asking Spotcheck, reusing ==`);
  let world: World | null = null;
  let service: BenchService | null = null;
  try {
    world = await startWorld();
    service = await startService({
      FACILITATOR_URL: world.state.facilitatorUrl,
      SERVICE_WALLET: world.state.serviceWallet,
      RPC_URLS: world.state.rpcUrls.join(','),
    });
    const seller = world.state.sellers['sdk-ok'] ?? '';
    const primed = await fetch(checkUrl(service.url, seller), { headers: service.headers });
    if (primed.status !== 200) throw new Error(`bench: priming check answered ${primed.status}`);
    await primed.arrayBuffer();
    const account = privateKeyToAccount(world.state.buyerKeys[0] as `0x${string}`);
    const payer = createPayer(account, service.url);
    const samples: Samples = {
      plain: { total: [], guard: [] },
      asks: { total: [], guard: [] },
      reuses: { total: [], guard: [] },
    };
    for (let i = -warmup; i < n; i++) {
      for (const mode of ['plain', 'asks', 'reuses'] as const) {
        const timed = await payer.pay(mode, seller);
        if (i >= 0) {
          samples[mode].total.push(timed.total);
          samples[mode].guard.push(timed.guard);
        }
      }
    }
    return report(samples, payer.events(), n);
  } finally {
    if (service) {
      await service.stop();
      await service.remove();
    }
    await world?.stop();
  }
}

/** Pays `url` once per call in the mode asked, timing the whole request and the guard's hook. */
function createPayer(account: ReturnType<typeof privateKeyToAccount>, service: string) {
  const events: GuardEvent[] = [];
  const build = (guarded: boolean) => {
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
    const hook = { started: 0, spent: 0 };
    client.onBeforePaymentCreation(async () => {
      hook.started = performance.now();
      return undefined;
    });
    const guard = guarded
      ? attachGuard(client, { service, key: BENCH_KEY, onEvent: (event) => events.push(event) })
      : null;
    client.onBeforePaymentCreation(async () => {
      hook.spent = performance.now() - hook.started;
      return undefined;
    });
    return { client, guard, hook, fetch: wrapFetchWithPayment(fetch, client) };
  };
  const longLived = build(true);
  return {
    events: () => events,
    async pay(mode: Mode, url: string): Promise<{ total: number; guard: number }> {
      const payer = mode === 'reuses' ? longLived : build(mode === 'asks');
      const paying = payer.guard
        ? trackTimed(payer.guard, payer.fetch)
        : { fetch: payer.fetch, spent: () => 0 };
      const started = performance.now();
      const response = await paying.fetch(url);
      await response.arrayBuffer();
      const total = performance.now() - started;
      if (response.status !== 200) throw new Error(`bench: a ${mode} payment answered ${response.status}`);
      return { total, guard: payer.guard ? payer.hook.spent + paying.spent() : 0 };
    },
  };
}

/** `guard.track(paying)` with the wrapper's own time: all of it but the paying fetch it wraps. */
function trackTimed(guard: Guard, paying: typeof fetch) {
  let inner = 0;
  const measured: typeof fetch = async (input, init) => {
    const started = performance.now();
    try {
      return await paying(input, init);
    } finally {
      inner = performance.now() - started;
    }
  };
  const tracked = guard.track(measured);
  let outer = 0;
  return {
    fetch: (async (input, init) => {
      const started = performance.now();
      try {
        return await tracked(input, init);
      } finally {
        outer = performance.now() - started;
      }
    }) as typeof fetch,
    spent: () => outer - inner,
  };
}

function report(samples: Samples, events: GuardEvent[], n: number): Result {
  const s = (mode: Mode, part: 'total' | 'guard'): Summary => summarize(samples[mode][part]);
  const asked = events.filter((e) => e.type === 'approved' && !e.reused).length;
  const reused = events.filter((e) => e.type === 'approved' && e.reused).length;
  const refused = events.filter((e) => e.type !== 'approved').length;
  if (refused > 0) throw new Error(`bench: the guard did not approve ${refused} payments`);
  console.log(line('paid request without the guard', s('plain', 'total')));
  console.log(line('paid request, guard asks Spotcheck', s('asks', 'total')));
  console.log(line('  guard time (check bound to the challenge)', s('asks', 'guard')));
  console.log(line('paid request, guard reuses its approval', s('reuses', 'total')));
  console.log(line('  guard time (approval reused)', s('reuses', 'guard')));
  const delta = s('asks', 'total').p50 - s('plain', 'total').p50;
  console.log(
    `${asked} checks asked, ${reused} approvals reused; end-to-end p50 difference, asking: ${delta.toFixed(2)} ms`,
  );
  const figures: Figure[] = [
    { name: 'paid request p50, no guard', value: round(s('plain', 'total').p50), unit: 'ms' },
    {
      name: 'guard added p50, asking Spotcheck',
      value: round(s('asks', 'guard').p50),
      unit: 'ms',
      target: { max: 3 },
    },
    { name: 'guard added p99, asking Spotcheck', value: round(s('asks', 'guard').p99), unit: 'ms' },
    {
      name: 'guard added p50, approval reused',
      value: round(s('reuses', 'guard').p50, 3),
      unit: 'ms',
      target: { max: 3 },
    },
    { name: 'end-to-end p50 difference, asking', value: round(delta), unit: 'ms' },
  ];
  return {
    bench: 'guard',
    figures,
    notes: [
      `${n} interleaved rounds of three paid requests of sdk-ok (settled on anvil); Spotcheck's probe of it fresh throughout`,
      'guard added = time inside its onBeforePaymentCreation hook (the check call) + its track() bookkeeping',
    ],
  };
}
