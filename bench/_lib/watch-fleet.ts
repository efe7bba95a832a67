/**
 * The loopback fleet of the watch benches (`bench/watches-scale.ts`, `bench/watches-delivery.ts`), in a process of
 * its own so the service's CPU and RSS are measured alone. Host `h` listens on its own port and answers every path
 * with an honest v2 402 after its own latency (`minMs`..`maxMs`, deterministic), naming the host's current wallet.
 * Every request's path and time (epoch ms) is recorded. Over IPC:
 * - `{ type: 'start', hosts, minMs, maxMs }` answers `{ type: 'hosts', hosts: FleetHost[] }`;
 * - `{ type: 'wallet', hosts: number[], wallet }` changes those hosts' wallets and answers `{ type: 'changed', at }`;
 * - `{ type: 'times' }` answers `{ type: 'times', times: Record<path, number[]>, maxInFlight, paymentHeaders }`,
 *   where a path is `origin + path`; `{ type: 'count' }` answers `{ type: 'count', probes }`;
 * - `{ type: 'seen', after }` answers `{ type: 'seen', first: Record<path, number> }`: each path's first request
 *   answered at or after `after` (the probe that saw a change made at `after`).
 * The fleet exits when the bench goes away.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BASE, BASE_USDC_TOKEN, FLEET_WALLET } from '../../sandbox/sellers/constants.ts';
import { base64Json, v2Accept, v2Required } from '../../sandbox/sellers/wire.ts';

/** One host of the fleet. */
export type FleetHost = { origin: string; latencyMs: number };

const times = new Map<string, number[]>();
let maxInFlight = 0;
let paymentHeaders = 0;
let probes = 0;
const wallets: string[] = [];

async function startHosts(count: number, minMs: number, maxMs: number): Promise<FleetHost[]> {
  const hosts: FleetHost[] = [];
  for (let h = 0; h < count; h++) {
    const latencyMs = minMs + ((h * 7919) % (maxMs - minMs + 1));
    wallets.push(FLEET_WALLET);
    let inFlight = 0;
    let origin = '';
    const server = createServer((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (req.headers['payment-signature'] !== undefined || req.headers['x-payment'] !== undefined)
        paymentHeaders++;
      req.resume();
      setTimeout(() => {
        inFlight--;
        const key = origin + (req.url ?? '/');
        const list = times.get(key);
        if (list) list.push(Date.now());
        else times.set(key, [Date.now()]);
        probes++;
        const required = v2Required(`${origin}${req.url}`, [
          v2Accept(BASE, BASE_USDC_TOKEN, wallets[h] ?? FLEET_WALLET),
        ]);
        res.writeHead(402, { 'content-type': 'application/json', 'payment-required': base64Json(required) });
        res.end('{}');
      }, latencyMs);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', 1024, done));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    hosts.push({ origin, latencyMs });
  }
  return hosts;
}

type Message = { type?: string; hosts?: number | number[]; minMs?: number; maxMs?: number; wallet?: string };

process.on('message', (message: Message & { after?: number }) => {
  if (message.type === 'start') {
    const count = typeof message.hosts === 'number' ? message.hosts : 100;
    void startHosts(count, message.minMs ?? 50, message.maxMs ?? 250).then((hosts) =>
      process.send?.({ type: 'hosts', hosts }),
    );
  }
  if (message.type === 'wallet' && Array.isArray(message.hosts)) {
    for (const h of message.hosts) wallets[h] = message.wallet ?? FLEET_WALLET;
    process.send?.({ type: 'changed', at: Date.now() });
  }
  if (message.type === 'count') process.send?.({ type: 'count', probes });
  if (message.type === 'times')
    process.send?.({ type: 'times', times: Object.fromEntries(times), maxInFlight, paymentHeaders });
  if (message.type === 'seen') {
    const after = message.after ?? 0;
    const first: Record<string, number> = {};
    for (const [path, list] of times) {
      const t = list.find((x) => x >= after);
      if (t !== undefined) first[path] = t;
    }
    process.send?.({ type: 'seen', first });
  }
});
process.on('disconnect', () => process.exit(0));
