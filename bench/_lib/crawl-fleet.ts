/**
 * The simulated fleet of `bench/crawl.ts`, in a process of its own (forked by the bench), so the crawl's CPU and
 * RSS are measured alone, as they are in production where sellers are remote. Host `h` answers an honest 402
 * after its own latency (200–1000 ms, deterministic). Over IPC: `{ type: 'start', hosts }` answers the hosts'
 * origins and latencies; `{ type: 'stats' }` answers the most requests any host had in flight, the payment
 * headers seen and the connections accepted. The fleet exits when the bench goes away.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BASE, BASE_USDC_TOKEN, FLEET_WALLET } from '../../sandbox/sellers/constants.ts';
import { base64Json, v2Accept, v2Required } from '../../sandbox/sellers/wire.ts';

/** One host of the fleet. */
export type FleetHost = { origin: string; latencyMs: number };

let maxInFlight = 0;
let paymentHeaders = 0;
let connections = 0;

async function startHosts(count: number): Promise<FleetHost[]> {
  const hosts: FleetHost[] = [];
  for (let h = 0; h < count; h++) {
    const latencyMs = 200 + ((h * 7919) % 801);
    let inFlight = 0;
    const server = createServer((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (req.headers['payment-signature'] !== undefined || req.headers['x-payment'] !== undefined)
        paymentHeaders++;
      req.resume();
      setTimeout(() => {
        inFlight--;
        const required = v2Required(`http://x${req.url}`, [v2Accept(BASE, BASE_USDC_TOKEN, FLEET_WALLET)]);
        res.writeHead(402, { 'content-type': 'application/json', 'payment-required': base64Json(required) });
        res.end('{}');
      }, latencyMs);
    });
    server.on('connection', () => connections++);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', 1024, done));
    hosts.push({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, latencyMs });
  }
  return hosts;
}

process.on('message', (message: { type?: string; hosts?: number }) => {
  if (message.type === 'start')
    void startHosts(message.hosts ?? 500).then((hosts) => process.send?.({ type: 'hosts', hosts }));
  if (message.type === 'stats') process.send?.({ type: 'stats', maxInFlight, paymentHeaders, connections });
});
process.on('disconnect', () => process.exit(0));
