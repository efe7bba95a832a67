/**
 * Malformed input never yields a 5xx or a hang: a seeded stream of hostile requests against every route of the
 * app, through `app.fetch`, with a prober that must never be reached by a request the gate or parser refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const blocked = async (): Promise<ProbeOutcome> => ({
  kind: 'blocked',
  detail: 'test',
  probedAt: new Date().toISOString(),
  elapsedMs: 0,
});
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
  it('600 malformed requests: every answer is a 2xx/4xx with a JSON error shape when it is an error', async () => {
    const random = mulberry32(402);
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
      const res = await appFetch(spot.service, `${path}?${params}`, {
        method,
        ...(body === null ? {} : { body, headers: { 'content-type': 'application/json' } }),
        ip: `203.0.113.${i % 250}`,
      });
      const label = `#${i} ${method} ${path}?${params}`.slice(0, 200);
      expect(res.status, label).toBeLessThan(500);
      if (
        method !== 'HEAD' &&
        res.status >= 400 &&
        res.status !== 402 &&
        res.headers.get('content-type')?.includes('json')
      ) {
        const error = (await res.json()) as { error?: { code?: unknown } };
        expect(typeof error.error?.code, label).toBe('string');
      } else {
        await res.arrayBuffer();
      }
    }
  }, 60_000);
});
