/**
 * Malformed input never yields a 5xx or a hang: a seeded stream of hostile requests against every route of the
 * app, through `app.fetch`, with a prober that must never be reached by a request the gate or parser refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

/** Calls that reached the prober: a request the gate or parser refuses must add none. */
let probeCalls = 0;
const blocked = async (): Promise<ProbeOutcome> => {
  probeCalls++;
  return { kind: 'blocked', detail: 'test', probedAt: new Date().toISOString(), elapsedMs: 0 };
};
let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, { prober: { probe: blocked } }, { listen: false });
});
afterAll(async () => {
  await spot.stop();
});

/** A small deterministic generator, so a failure names a reproducible case. */
function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  '',
  '%',
  '%%',
  '%zz',
  '%00',
  '%C0%AF',
  '\u0000',
  '\uD800',
  '🙂',
  '..',
  '../../etc/passwd',
  'a'.repeat(5000),
  'http://',
  'https://[::1',
  'https://a.example:99999/',
  'https://a.example/%',
  '1e309',
  '-0',
  'NaN',
  '[]',
  '{}',
  'null',
  'true',
  '0x',
  `0x${'g'.repeat(40)}`,
  'eip155:',
  ':',
  'GET',
  'POST',
  'dry-run',
  '1',
  '300',
  '301',
];
const NAMES = [
  'url',
  'method',
  'claimed_price',
  'pay_to',
  'network',
  'mode',
  'check_expiry',
  'skew_s',
  'ref',
  'client',
  'task',
  'type',
  'page',
  'page_size',
  'id',
  'x',
];
const PATHS = [
  '/v1/products/endpoint-spot-check',
  '/v1/receipts',
  '/v1/receipts/by-url',
  '/v1/receipts/sc-x',
  `/v1/receipts/sc-${'a'.repeat(26)}`,
  '/v1/receipts/%2e%2e%2f',
  '/.well-known/jwks.json',
  '/healthz',
  '/nope',
];

describe('hostile input', () => {
  it('600 malformed requests: every answer is a 2xx/4xx, every error JSON, and no 4xx reached the prober', async () => {
    const random = mulberry32(402);
    const statuses = new Map<number, number>();
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
    for (let i = 0; i < 600; i++) {
      const params = new URLSearchParams();
      const count = Math.floor(random() * 4);
      for (let j = 0; j < count; j++) params.append(pick(NAMES), pick(PIECES));
      const path = pick(PATHS);
      const post = random() < 0.3;
      const body = post
        ? pick(['{', '[]', '{"url":1}', `{"url":"${pick(PIECES)}"}`, '\u0000', pick(PIECES)])
        : null;
      const method = post ? 'POST' : pick(['GET', 'GET', 'PUT', 'DELETE', 'HEAD']);
      const callsBefore = probeCalls;
      const res = await appFetch(spot.service, `${path}?${params}`, {
        method,
        ...(body === null ? {} : { body, headers: { 'content-type': 'application/json' } }),
        ip: `203.0.113.${i % 250}`,
      });
      const label = `#${i} ${method} ${path}?${params}`.slice(0, 200);
      expect(res.status, label).toBeLessThan(500);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 400)
        expect(probeCalls, `${label}: a ${res.status} reached the prober`).toBe(callsBefore);
      if (method !== 'HEAD' && res.status >= 400) {
        expect(res.headers.get('content-type'), label).toMatch(/^application\/json\b/);
        const answer = (await res.json()) as { error?: { code?: unknown } };
        // A 402 carries the x402 payment requirement as its JSON body, not the error shape.
        if (res.status !== 402) expect(typeof answer.error?.code, label).toBe('string');
      } else {
        await res.arrayBuffer();
      }
    }
    expect(
      [...statuses.keys()].some((status) => status >= 400),
      JSON.stringify([...statuses]),
    ).toBe(true);
    // The stream meets no 402: a malformed payment header earns one, which must be JSON and probe nothing.
    const unpaid = probeCalls;
    const required = await appFetch(
      spot.service,
      '/v1/products/endpoint-spot-check?url=https://seller.example/x',
      {
        headers: { 'PAYMENT-SIGNATURE': 'not-base64!' },
        ip: '198.51.100.98',
      },
    );
    expect(required.status).toBe(402);
    expect(required.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(await required.json()).toMatchObject({ x402Version: 2 });
    expect(probeCalls).toBe(unpaid);
    // Control: a well-formed check does reach the prober, so the counter above would see a leak.
    const before = probeCalls;
    const control = await appFetch(
      spot.service,
      '/v1/products/endpoint-spot-check?url=https://seller.example/x',
      {
        ip: '198.51.100.99',
      },
    );
    expect(control.status).toBe(200);
    expect(await control.json()).toMatchObject({ verdict: 'skip', reason_code: 'ssrf_blocked' });
    expect(probeCalls).toBe(before + 1);
  }, 60_000);
});
