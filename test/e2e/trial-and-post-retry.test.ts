/**
 * Two verdict rules end to end, through the real service on a port, its SSRF-gated prober and real sellers on
 * loopback (docs/decisions.md "Free-trial headers" and "The probe"):
 * - a free-trial header whose count does not parse still announces a trial: `recheck`, `free_trial_active`,
 *   `free_trial_remaining: null`, never `pay`;
 * - `probe.method_used` appears only when the listed GET answered 405 and the 402 came from the POST retry; a
 *   retry that answered anything else leaves the GET's 405 as the answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, BASE_USDC_TOKEN } from '../../sandbox/sellers/constants.ts';
import { FLEET_WALLET } from '../../sandbox/sellers/index.ts';
import { requestUrl, send, sendJson, sendV2, v2Accept, v2Required } from '../../sandbox/sellers/wire.ts';
import { EXEMPT_SECRET, startTestService, type TestService } from '../helpers/service.ts';

let spot: TestService;
let seller: Server;
let origin: string;
const seen: string[] = [];

beforeAll(async () => {
  // One seller, a behaviour per path: an honest Base USDC 402 unless the path says otherwise.
  seller = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://seller').pathname;
    seen.push(`${req.method} ${path}`);
    req.resume();
    const challenge = () => v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, FLEET_WALLET)]);
    if (path.startsWith('/trial/'))
      return sendV2(res, challenge(), { 'x-free-trial': decodeURIComponent(path.slice(7)) });
    if (path === '/trial-remaining-empty') return sendV2(res, challenge(), { 'x-free-trial-remaining': '' });
    if (path === '/trial-over') return sendV2(res, challenge(), { 'x-free-trial-remaining': '0' });
    if (req.method === 'GET' && path.startsWith('/post-'))
      return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
    if (path === '/post-404') return send(res, 404, { 'content-type': 'text/plain' }, 'not found');
    if (path === '/post-500') return send(res, 500, { 'content-type': 'text/plain' }, 'broken');
    sendV2(res, challenge());
  });
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;
  spot = await startTestService();
});
afterAll(async () => {
  await spot?.stop();
  seller?.closeAllConnections();
  await new Promise<void>((resolve) => (seller ? seller.close(() => resolve()) : resolve()));
});

/** A full (exempt-tier) check of `path`, and the public receipt it names. */
async function check(path: string) {
  const url = `${origin}${path}`;
  const res = await fetch(`${spot.url}/v1/products/endpoint-spot-check?${new URLSearchParams({ url })}`, {
    headers: { 'x-service-key': EXEMPT_SECRET },
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as Record<string, unknown>;
  const receipt = (await (await fetch(`${spot.url}/v1/receipts/${answer.receipt_id}`)).json()) as Record<
    string,
    unknown
  >;
  return { answer, receipt };
}

describe('a free-trial header whose count does not parse', () => {
  it.each(['/trial/unlimited', '/trial/n%2Fa', '/trial-remaining-empty'])(
    '%s: recheck, free_trial_active, free_trial_remaining null, in the answer and the receipt',
    async (path) => {
      const { answer, receipt } = await check(path);
      for (const body of [answer, receipt]) {
        expect(body).toMatchObject({
          verdict: 'recheck',
          reason: 'free_trial_active',
          reason_code: 'free_trial_active',
          payment: null,
          payment_terms_sha256: null,
        });
        expect(body).toHaveProperty('free_trial_remaining', null);
      }
    },
  );

  it('a trial that says it is over is no trial: the terms decide', async () => {
    const { answer } = await check('/trial-over');
    expect(answer).toMatchObject({ verdict: 'pay', reason: 'price_ok' });
    expect(answer).not.toHaveProperty('free_trial_remaining');
  });
});

describe('the POST retry of a GET answered 405', () => {
  it.each([
    ['/post-404', 404],
    ['/post-500', 500],
  ])('%s: the retry found no paywall, so the answer is the GET 405, with no method_used', async (path) => {
    seen.length = 0;
    const { answer, receipt } = await check(path);
    expect(seen).toEqual([`GET ${path}`, `POST ${path}`]);
    for (const body of [answer, receipt]) {
      expect(body).toMatchObject({ verdict: 'skip', reason: 'no_paywall', payment: null });
      expect(body.probe).not.toHaveProperty('method_used');
    }
    expect(receipt).toMatchObject({ method: 'GET', http_status: 405 });
  });

  it('control: a POST retry answered 402 is the answer, and method_used says POST', async () => {
    const { answer, receipt } = await check('/post-402');
    for (const body of [answer, receipt]) {
      expect(body).toMatchObject({ verdict: 'pay', reason: 'price_ok', probe: { method_used: 'POST' } });
    }
    expect(receipt).toMatchObject({ method: 'GET', http_status: 402 });
  });
});
