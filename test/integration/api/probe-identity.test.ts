/**
 * A cached probe answers only for the URL it requested. The real prober against a strict loopback
 * server where `/paid/` is a 404 and `/paid` a 402: a probe of one is never reused for the other, and every receipt
 * names the URL whose status it reports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildV2Header } from '../../fixtures/challenge.ts';
import { sourceEvidence, TX } from '../../fixtures/payment.ts';
import { type RawServer, startHttpServer } from '../../fixtures/raw-server.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

let strict: RawServer;
let spot: TestService;
beforeAll(async () => {
  strict = await startHttpServer((req, res) => {
    if (req.url === '/paid' || req.url === '/paid?a=1&b=2' || req.url === '/ps') {
      res.writeHead(402, { 'content-type': 'application/json', 'payment-required': buildV2Header() });
      res.end('{}');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  const evidence = (name: string) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 });
  const chain = { read: async () => ({ sources: [evidence('rpc-1'), evidence('rpc-2')] }) };
  spot = await startTestService({}, { chain }, { listen: false });
});
afterAll(async () => {
  await spot.stop();
  await strict.close();
});

type Answer = { verdict: string; reason_code: string; receipt_id: string };
async function checkOf(
  query: string,
  ip: string,
): Promise<{ answer: Answer; receipt: Record<string, unknown> }> {
  const res = await appFetch(spot.service, `/v1/products/endpoint-spot-check?${query}`, { ip });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as Answer;
  const receipt = await appFetch(spot.service, `/v1/receipts/${answer.receipt_id}`);
  return { answer, receipt: (await receipt.json()) as Record<string, unknown> };
}
const seenPaths = () => strict.seen.map((r) => r.url);

describe('a probe is reused only for the URL it requested', () => {
  it('a dry run of /paid/ (404) is not served to a check of /paid (402)', async () => {
    const slash = await checkOf(
      `url=${encodeURIComponent(`${strict.origin}/paid/`)}&mode=dry-run`,
      '198.51.100.1',
    );
    expect(slash.answer).toMatchObject({ verdict: 'skip', reason_code: 'no_paywall' });
    expect(slash.receipt).toMatchObject({ url: `${strict.origin}/paid/`, http_status: 404 });

    const bare = await checkOf(`url=${encodeURIComponent(`${strict.origin}/paid`)}`, '198.51.100.2');
    expect(bare.answer).toMatchObject({ verdict: 'pay', reason_code: 'price_ok' });
    expect(bare.receipt).toMatchObject({ url: `${strict.origin}/paid`, http_status: 402 });
    expect((bare.receipt.probe as { cached: boolean }).cached).toBe(false);
    expect(seenPaths()).toEqual(['/paid/', '/paid']);
  });

  it('the query is requested as written, and reused only for the same query', async () => {
    const before = strict.seen.length;
    const sorted = await checkOf(
      `url=${encodeURIComponent(`${strict.origin}/paid?a=1&b=2`)}`,
      '198.51.100.3',
    );
    expect(sorted.receipt).toMatchObject({ url: `${strict.origin}/paid?a=1&b=2`, http_status: 402 });
    const swapped = await checkOf(
      `url=${encodeURIComponent(`${strict.origin}/paid?b=2&a=1`)}`,
      '198.51.100.4',
    );
    expect(swapped.receipt).toMatchObject({ url: `${strict.origin}/paid?b=2&a=1`, http_status: 404 });
    expect(seenPaths().slice(before)).toEqual(['/paid?a=1&b=2', '/paid?b=2&a=1']);
  });

  it('the same URL, written differently but requested alike, reuses the probe', async () => {
    const before = strict.seen.length;
    const upper = strict.origin.replace('http://', 'HTTP://');
    const again = await checkOf(`url=${encodeURIComponent(`${upper}/paid#section`)}`, '198.51.100.5');
    expect(again.receipt).toMatchObject({ url: `${strict.origin}/paid`, http_status: 402 });
    expect((again.receipt.probe as { cached: boolean }).cached).toBe(true);
    expect(strict.seen.length).toBe(before);
  });
});

describe('payment status probes seller_url as requested', () => {
  it('a seller_url of /ps/ (404) is not reused for a check of /ps (402)', async () => {
    const before = strict.seen.length;
    const status = await appFetch(spot.service, '/v1/products/payment-status', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tx_hash: TX, seller_url: `${strict.origin}/ps/` }),
      ip: '198.51.100.6',
    });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { claim: unknown }).claim).toMatchObject({
      seller_url: `${strict.origin}/ps/`,
    });
    const check = await checkOf(`url=${encodeURIComponent(`${strict.origin}/ps`)}`, '198.51.100.7');
    expect(check.answer).toMatchObject({ verdict: 'pay' });
    expect(check.receipt).toMatchObject({ url: `${strict.origin}/ps`, http_status: 402 });
    expect(seenPaths().slice(before)).toEqual(['/ps/', '/ps']);
  });
});
