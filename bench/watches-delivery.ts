/**
 * Webhook delivery of the watches, end to end on loopback: the real service (`api/main.ts`, its own process: the
 * real watcher, its DuckDB outbox, Standard Webhooks headers signed with Ed25519, the SSRF gate with loopback allowed
 * as PROBE_ALLOW_CIDRS allows it) probes a fleet (`_lib/watch-fleet.ts`, its own process) and posts to a receiver in
 * this process that answers 204 at once. Watches are written into the store before the service starts
 * (`_lib/watch-seed.ts`).
 * - Latency: 200 endpoints on 200 hosts, one watch each; their wallets change in 10 waves of 20, 1 s apart; each
 *   change is timed from the fleet's answer to the probe that saw it (the first answer after the change) to the
 *   arrival of its `terms_changed` (target p99 ≤ 2 s).
 * - Burst: one big host, 100 endpoints with 100 watches each (10,000 watches), changes its wallet; the rate is the
 *   10,000 webhooks over the time from the first probe that saw the change to the last arrival (target ≥ 500/s);
 *   the rate between the first and last arrival is shown beside it.
 * Every webhook's id is counted (duplicates are reported), 100 of them are verified with `@noble/ed25519` and the
 * JWKS. Knobs: BENCH_DELIVERY_CHANGES (200), BENCH_DELIVERY_BURST (10000, as 100 endpoints × watches).
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { type Received, verifyDelivery } from '../test/helpers/webhooks.ts';
import { intEnv, type Result, round } from './_lib/result.ts';
import { startService } from './_lib/service.ts';
import { percentile } from './_lib/stats.ts';
import type { FleetHost } from './_lib/watch-fleet.ts';
import { type SeedEndpoint, seedWatches } from './_lib/watch-seed.ts';
import { ask, forkHelper } from './crawl.ts';

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const NEW_WALLET = '0x00000000000000000000000000000000000b3c4d';
const BURST_ENDPOINTS = 100;

type Arrival = Received & { at: number; url: string; event: string; id: string };

/** Runs the bench. */
// long: one measured scenario read top to bottom: set-up, the two phases, the figures
export async function run(): Promise<Result> {
  const changes = intEnv('BENCH_DELIVERY_CHANGES', 200);
  const burst = intEnv('BENCH_DELIVERY_BURST', 10_000);
  const perEndpoint = Math.ceil(burst / BURST_ENDPOINTS);
  const loadAtStart = load();
  const arrivals: Arrival[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(body) as { url: string; event: string };
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      arrivals.push({
        headers,
        body,
        answered: 204,
        at: Date.now(),
        url: event.url,
        event: event.event,
        id: headers['webhook-id'] ?? '',
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const children: ChildProcess[] = [];
  const fleet = forkHelper('watch-fleet.ts');
  children.push(fleet);
  try {
    const { hosts } = await ask<{ hosts: FleetHost[] }>(
      fleet,
      { type: 'start', hosts: changes + 1, minMs: 5, maxMs: 20 },
      'hosts',
    );
    const big = hosts[changes] as FleetHost;
    const small = hosts.slice(0, changes).map((h) => `${h.origin}/e/0`);
    const bigUrls = Array.from({ length: BURST_ENDPOINTS }, (_, i) => `${big.origin}/e/${i}`);
    const endpoints: SeedEndpoint[] = [
      ...small.map((url) => ({ url, watches: 1, webhookUrl: hook, dueMs: 0 })),
      ...bigUrls.map((url) => ({ url, watches: perEndpoint, webhookUrl: hook, dueMs: 0 })),
    ];
    let seeded = 0;
    const service = await startService({ WATCH_INTERVAL_S: '5' }, async (dir) => {
      seeded = await seedWatches(dir, endpoints, Date.now());
    });
    try {
      // Every endpoint probed twice: each has its state, so the next change is a change.
      await until(async () => {
        const { times } = await ask<{ times: Record<string, number[]> }>(fleet, { type: 'times' }, 'times');
        return endpoints.every((e) => (times[e.url]?.length ?? 0) >= 2);
      }, 120_000);
      console.log(`watches-delivery: ${seeded} watches, states known; load ${load()}`);

      // Latency: 10 waves.
      const waves: Array<{ at: number; hosts: number[] }> = [];
      for (let w = 0; w < 10; w++) {
        const ids = Array.from({ length: changes / 10 }, (_, i) => w * (changes / 10) + i);
        const { at } = await ask<{ at: number }>(
          fleet,
          { type: 'wallet', hosts: ids, wallet: NEW_WALLET },
          'changed',
        );
        waves.push({ at, hosts: ids });
        await new Promise((r) => setTimeout(r, 1000));
      }
      const smallSet = new Set(small);
      await until(
        async () =>
          arrivals.filter((a) => smallSet.has(a.url) && a.event === 'terms_changed').length >= changes,
        60_000,
      );
      const latencies: number[] = [];
      for (const wave of waves) {
        const { first } = await ask<{ first: Record<string, number> }>(
          fleet,
          { type: 'seen', after: wave.at },
          'seen',
        );
        for (const h of wave.hosts) {
          const url = small[h] as string;
          const arrived = arrivals.find((a) => a.url === url && a.event === 'terms_changed');
          const seen = first[url];
          if (arrived && seen !== undefined) latencies.push(arrived.at - seen);
        }
      }
      latencies.sort((a, b) => a - b);
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      console.log(
        `  latency over ${latencies.length} changes: p50 ${p50} ms, p99 ${p99} ms, max ${latencies.at(-1)} ms; load ${load()}`,
      );

      // Burst.
      const { at: burstAt } = await ask<{ at: number }>(
        fleet,
        { type: 'wallet', hosts: [changes], wallet: NEW_WALLET },
        'changed',
      );
      const bigSet = new Set(bigUrls);
      const burstOf = () => arrivals.filter((a) => bigSet.has(a.url) && a.event === 'terms_changed');
      await until(async () => burstOf().length >= perEndpoint * BURST_ENDPOINTS, 180_000);
      const got = burstOf();
      const { first } = await ask<{ first: Record<string, number> }>(
        fleet,
        { type: 'seen', after: burstAt },
        'seen',
      );
      const seenAt = Math.min(...bigUrls.map((u) => first[u] ?? Number.POSITIVE_INFINITY));
      const firstArrival = Math.min(...got.map((a) => a.at));
      const lastArrival = Math.max(...got.map((a) => a.at));
      const rate = got.length / ((lastArrival - seenAt) / 1000);
      const arrivalRate = got.length / ((lastArrival - firstArrival) / 1000);
      const ids = arrivals.map((a) => a.id);
      const duplicates = ids.length - new Set(ids).size;
      const jwks = (await (await fetch(`${service.url}/.well-known/jwks.json`)).json()) as {
        keys: Array<{ kid: string; x: string }>;
      };
      const sample = arrivals.filter((_, i) => i % Math.max(1, Math.floor(arrivals.length / 100)) === 0);
      for (const a of sample) await verifyDelivery(a, jwks);
      const stats = await service.stats();
      console.log(
        `  burst: ${got.length} webhooks, ${round(rate, 0)}/s from the first probe that saw the change (${lastArrival - seenAt} ms), ${round(arrivalRate, 0)}/s first to last arrival; duplicates ${duplicates}; ${sample.length} signatures verified; peak RSS ${(stats.maxRss / 2 ** 20).toFixed(0)} MiB; load ${loadAtStart} -> ${load()}`,
      );
      return {
        bench: 'watches-delivery',
        figures: [
          { name: 'probe that saw a change to webhook arrival, p50', value: p50, unit: 'ms' },
          {
            name: 'probe that saw a change to webhook arrival, p99',
            value: p99,
            unit: 'ms',
            target: { max: 2000 },
          },
          {
            name: `burst of ${got.length} webhooks to one receiver, from the first probe that saw the change`,
            value: round(rate, 0),
            unit: 'webhooks/s',
            target: { min: 500 },
          },
          { name: 'the same burst, first to last arrival', value: round(arrivalRate, 0), unit: 'webhooks/s' },
          { name: 'webhook ids received twice', value: duplicates, unit: 'webhooks' },
        ],
        notes: [
          `${changes} changes timed; burst of ${got.length} webhooks (${BURST_ENDPOINTS} endpoints of one host × ${perEndpoint} watches); ${sample.length} signatures verified with @noble/ed25519; load ${loadAtStart} at the start, ${load()} at the end`,
        ],
      };
    } finally {
      await service.stop();
      await service.remove();
    }
  } finally {
    for (const child of children) child.kill();
    receiver.closeAllConnections();
    receiver.close();
  }
}

/** Polls `ready` every 200 ms until it holds; throws after `limitMs`. */
async function until(ready: () => Promise<boolean>, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`watches-delivery: not ready within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
