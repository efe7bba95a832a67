/**
 * A disputed listing end to end: a hostile discovery list names a victim's URL twice, first with an attacker's
 * wallet, then with the real one. The crawl holds the victim to neither (its receipt has no expectation), exports
 * neither, publishes no save and records the dispute; the running server takes the run in and a URL-only live
 * check, by-url and the badge all read the victim's live `pay`. A second seller also has its own
 * `/.well-known/x402`, naming its real wallet: that first-party word settles the same dispute, so the crawl holds
 * it to the real wallet.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../core/ssrf.ts';
import { runCrawl } from '../../crawl/run.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES } from '../../crawl/sources/fetch-json.ts';
import { readSource, sourceSpecOf } from '../../crawl/sources/read-source.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { createProber } from '../../io/probe/prober.ts';
import { runPaths } from '../../io/runs/paths.ts';
import { BASE, BASE_USDC_TOKEN } from '../../sandbox/sellers/constants.ts';
import { type SellerFleet, startSellers } from '../../sandbox/sellers/index.ts';
import { sendJson, sendV2, v2Accept, v2Required } from '../../sandbox/sellers/wire.ts';
import { EXEMPT_SECRET, startTestService, type TestService } from '../helpers/service.ts';

const allow = parseCidrList('127.0.0.0/8');
const ATTACKER = '0x9999999999999999999999999999999999999999';

let fleet: SellerFleet;
let spot: TestService;
let lists: Server;
let origin: string;

/** A discovery item naming `url` with `payTo`, one cent on Base. */
const item = (url: string, payTo: string) => ({
  resource: url,
  type: 'http',
  x402Version: 2,
  accepts: [
    {
      scheme: 'exact',
      network: BASE,
      amount: '10000',
      asset: BASE_USDC_TOKEN.asset,
      payTo,
      maxTimeoutSeconds: 60,
    },
  ],
});

beforeAll(async () => {
  fleet = await startSellers();
  spot = await startTestService();
  // The hostile list, and a seller of its own origin that publishes its own /.well-known/x402.
  lists = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const victim = fleet.urls['sdk-ok'];
    const own = `${origin}/own-seller`;
    if (path === '/discovery/resources') {
      const items = [
        item(victim, ATTACKER),
        item(victim, fleet.payTo),
        item(own, ATTACKER),
        item(own, fleet.payTo),
      ];
      return sendJson(res, 200, { x402Version: 2, items, pagination: { total: items.length } });
    }
    if (path === '/.well-known/x402')
      return sendJson(res, 200, { x402Version: 2, items: [item(own, fleet.payTo)] });
    if (path === '/own-seller' && req.method === 'GET')
      return sendV2(res, v2Required(own, [v2Accept(BASE, BASE_USDC_TOKEN, fleet.payTo)]));
    return sendJson(res, 404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => lists.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(lists.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await spot?.stop();
  await fleet?.close();
  await new Promise<void>((resolve) => (lists ? lists.close(() => resolve()) : resolve()));
});

describe('a URL listed with two wallets', () => {
  it('is nobody’s expectation: no skip, no save, no export, the dispute on record, the live check unharmed', {
    timeout: 90_000,
  }, async () => {
    const { signer } = await loadSigningKeys({ dir: join(spot.dataDir, 'keys') });
    const fetchJson = fetchJsonVia(createProber({ allow, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 }));
    const taken = new Set<string>();
    const specs = [`discovery:${origin}/discovery/resources`, `well-known:${origin}`].map((u) =>
      sourceSpecOf(u, taken),
    );
    const paths = runPaths(spot.dataDir, 'crawl');
    const result = await runCrawl(
      {
        prober: createProber({ allow, timeoutMs: 5000 }),
        signer,
        now: () => new Date(),
        random: (n: number) => new Uint8Array(randomBytes(n)),
        baseUrl: spot.config.baseUrl,
        monotonic: () => performance.now(),
        paths,
        readSources: () => Promise.all(specs.map((s) => readSource(fetchJson, s))),
        progressOut: { write: () => true },
        log: () => {},
      },
      { resume: false, concurrency: null, limit: null },
    );
    const runDir = join(paths.root, result.pointer.path);
    const read = async (name: string) => JSON.parse(await readFile(join(runDir, name), 'utf8'));
    const victim = fleet.urls['sdk-ok'];
    const own = `${origin}/own-seller`;

    const lines = (await readFile(join(runDir, 'receipts.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const victimLine = lines.find((l) => l.url === victim);
    expect(victimLine).toMatchObject({
      verdict: 'pay',
      reason: 'price_ok',
      expected_source: null,
      listed_pay_to: null,
      disputed: ['pay_to'],
    });
    const receipt = await read(join('receipts', `${victimLine.id}.json`));
    expect(receipt).toMatchObject({
      verdict: 'pay',
      expected_source: null,
      expected_pay_to: null,
      listing: { pay_to: null, disputed: ['pay_to'] },
    });
    // The origin's own document names the real wallet: that side is the expectation.
    expect(lines.find((l) => l.url === own)).toMatchObject({
      verdict: 'pay',
      expected_source: 'listing',
      listed_pay_to: fleet.payTo,
    });
    expect(lines.find((l) => l.url === own)).not.toHaveProperty('disputed');

    expect((await read('saves.json')).count).toBe(0);
    expect((await read('skips/1.json')).skips).toEqual([]);
    const exported = (await read('listings.json')) as Array<{ url: string; pay_to: string }>;
    expect(exported.map((l) => [l.url, l.pay_to])).toEqual([[own, fleet.payTo]]);
    const disputes = await read('disputes.json');
    expect(disputes).toMatchObject({ schema: 1, count: 1 });
    expect(disputes.disputes[0]).toMatchObject({ url_norm: victim, fields: ['pay_to'], count: 2 });
    expect(disputes.disputes[0].listings.map((l: { pay_to: string }) => l.pay_to)).toEqual([
      ATTACKER,
      fleet.payTo,
    ]);

    // The server takes the run in; a check of the URL alone is held to no listing, and the record stays green.
    await spot.service.takeInRuns();
    const live = await fetch(
      `${spot.url}/v1/products/endpoint-spot-check?url=${encodeURIComponent(victim)}`,
      {
        headers: { 'x-service-key': EXEMPT_SECRET },
      },
    );
    const answer = await live.json();
    expect(answer).toMatchObject({ verdict: 'pay', reason_code: 'price_ok', expected_source: null });
    expect(answer.reputation?.breakdown?.honesty).toMatchObject({ value: 1 });
    const byUrl = await fetch(`${spot.url}/v1/receipts/by-url?url=${encodeURIComponent(victim)}`);
    expect(await byUrl.json()).toMatchObject({ verdict: 'pay' });
    const badge = await fetch(`${spot.url}/badge/${new URL(victim).host}.json`);
    expect(badge.headers.get('x-badge-state')).toBe('pay');
    expect((await (await fetch(`${spot.url}/saves.json`)).json()).count).toBe(0);
  });
});
