/**
 * The prober's limit of requests in flight per resolved address (`io/probe/address-slots.ts`): one server reached
 * through many names (wildcard DNS, or many domains pointed at one address) never has more than the cap of probes
 * in flight, whatever the names; time queued for a slot is not the target's and does not count in its budget.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseCidrList } from '../../../core/ssrf.ts';
import { MAX_IN_FLIGHT_PER_ADDRESS, serverKey } from '../../../io/probe/address-slots.ts';
import { createProber, type Lookup, type ProberOptions } from '../../../io/probe/prober.ts';
import { type RawServer, startHttpServer } from '../../fixtures/raw-server.ts';

const LOOPBACK = parseCidrList('127.0.0.0/8');
const servers: RawServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Every name resolves to 127.0.0.1: many names, one server. */
const toLoopback: Lookup = async () => [{ address: '127.0.0.1', family: 4 }];

/** A loopback server that counts its requests in flight; `answer` decides when each is answered. */
async function countingServer(answer: (res: ServerResponse) => void) {
  const state = { inFlight: 0, most: 0, hosts: new Set<string>() };
  const s = await startHttpServer((req, res) => {
    state.inFlight++;
    state.most = Math.max(state.most, state.inFlight);
    state.hosts.add(String(req.headers.host));
    res.on('finish', () => state.inFlight--);
    answer(res);
  });
  servers.push(s);
  return { ...s, state };
}

function prober(options: ProberOptions = {}) {
  return createProber({ allow: LOOPBACK, lookup: toLoopback, timeoutMs: 5000, ...options });
}

describe('prober: requests in flight per resolved address', () => {
  it(`a slow server under 150 names never sees more than ${MAX_IN_FLIGHT_PER_ADDRESS} in flight, and every probe is answered`, async () => {
    // The server is slow: each answer leaves 20 ms after its request came.
    const s = await countingServer((res) => setTimeout(() => res.writeHead(402).end('{}'), 20));
    const p = prober();
    const outcomes = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        p.probe(`http://n${i}.wildcard-${i}.example:${s.port}/paid`, 'GET'),
      ),
    );
    expect(s.state.hosts.size).toBe(150);
    expect(outcomes.map((o) => (o.kind === 'response' ? o.response.status : o.kind))).toEqual(
      Array(150).fill(402),
    );
    expect(s.state.most).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ADDRESS);
    // Well above the 3 per host: a CDN's one address serves many sellers.
    expect(s.state.most).toBeGreaterThan(3);
  });

  it('counts per address and port: a full server does not hold back another one on the same IP', async () => {
    const held: ServerResponse[] = [];
    const full = await countingServer((res) => held.push(res));
    const other = await countingServer((res) => res.writeHead(402).end('{}'));
    const p = prober({ maxInFlightPerAddress: 2 });
    const first = [1, 2, 3].map((i) => p.probe(`http://a${i}.full.example:${full.port}/`, 'GET'));
    await vi.waitFor(() => expect(held).toHaveLength(2), { timeout: 20_000 });
    // The third probe of the full server waits for a slot; the other port answers meanwhile.
    expect(await p.probe(`http://b.other.example:${other.port}/`, 'GET')).toMatchObject({ kind: 'response' });
    expect(full.state.inFlight).toBe(2);
    for (const res of held.splice(0)) res.writeHead(402).end('{}');
    await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 20_000 });
    for (const res of held.splice(0)) res.writeHead(402).end('{}');
    for (const outcome of await Promise.all(first)) expect(outcome).toMatchObject({ kind: 'response' });
    expect(full.state.most).toBe(2);
  });

  it('does not count the time queued for a slot in the probe budget', async () => {
    // One slot, a 1 s budget and 400 ms answers: the third probe queues about 800 ms, then takes 400 ms.
    const s = await countingServer((res) => setTimeout(() => res.writeHead(402).end('{}'), 400));
    const p = prober({ maxInFlightPerAddress: 1, timeoutMs: 1000, addressQueueMs: 5000 });
    const outcomes = await Promise.all(
      [1, 2, 3].map((i) => p.probe(`http://q${i}.queue.example:${s.port}/`, 'GET')),
    );
    expect(outcomes.map((o) => o.kind)).toEqual(['response', 'response', 'response']);
    expect(s.state.most).toBe(1);
  });

  it('gives up after `addressQueueMs` queued as timeout_queue, without connecting', async () => {
    const held: ServerResponse[] = [];
    const s = await countingServer((res) => held.push(res));
    const p = prober({ maxInFlightPerAddress: 1, addressQueueMs: 100 });
    const first = p.probe(`http://first.example:${s.port}/`, 'GET');
    await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 20_000 });
    expect(await p.probe(`http://second.example:${s.port}/`, 'GET')).toMatchObject({
      kind: 'timeout',
      detail: 'timeout_queue',
    });
    expect(s.seen).toHaveLength(1);
    held[0]!.writeHead(402).end('{}');
    expect(await first).toMatchObject({ kind: 'response' });
    // The slot the given-up probe waited for was never taken: the next probe gets it at once.
    const third = p.probe(`http://third.example:${s.port}/`, 'GET');
    await vi.waitFor(() => expect(held).toHaveLength(2), { timeout: 20_000 });
    held[1]!.writeHead(402).end('{}');
    expect(await third).toMatchObject({ kind: 'response' });
  });
});

describe('serverKey', () => {
  it('is one key for every form of one IPv4 address, and differs by port', () => {
    const key = serverKey('203.0.113.7', 443);
    expect(serverKey('::ffff:203.0.113.7', 443)).toBe(key);
    expect(serverKey('::ffff:cb00:7107', 443)).toBe(key);
    expect(serverKey('64:ff9b::cb00:7107', 443)).toBe(key);
    expect(serverKey('2002:cb00:7107::1', 443)).toBe(key);
    expect(serverKey('203.0.113.7', 8443)).not.toBe(key);
    expect(serverKey('2001:DB8:0:0::1', 443)).toBe(serverKey('2001:db8::1', 443));
    expect(serverKey('2001:db8::1', 443)).not.toBe(serverKey('2001:db8::2', 443));
  });
});
