/**
 * Listing sources through the real SSRF-gated prober on loopback (allowed only through the test's allow list,
 * as `PROBE_ALLOW_CIDRS` does): paging to the end, garbage and failures reported, never thrown.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_USDC } from '../../../core/networks.ts';
import { parseCidrList } from '../../../core/ssrf.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES } from '../../../crawl/sources/fetch-json.ts';
import { parseSourceConfig, readSource, sourceSpecOf } from '../../../crawl/sources/read-source.ts';
import { createProber } from '../../../io/probe/prober.ts';

const WALLET = '0x1111111111111111111111111111111111111111';
/** A page of Circle's list in its published shape (docs/decisions.md "Circle's discovery list"), values our own. */
const circlePage = JSON.parse(
  await readFile(join(import.meta.dirname, '../../fixtures/circle-discovery-page.json'), 'utf8'),
) as { items: unknown[] };
const TOTAL = 45;
const item = (i: number) => ({
  resource: `https://seller${i % 4}.example/r/${i}`,
  type: 'http',
  x402Version: 2,
  accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '1000', asset: BASE_USDC, payTo: WALLET }],
  lastUpdated: i % 2 === 0 ? 1_790_000_000 : '2026-01-01T00:00:00Z',
});

let server: Server;
let base: string;
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url.pathname + url.search);
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    const limit = Number(url.searchParams.get('limit') ?? 10);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    switch (url.pathname) {
      case '/cdp/discovery/resources': {
        const items = Array.from({ length: TOTAL }, (_, i) => item(i)).slice(
          offset,
          offset + Math.min(limit, 20),
        );
        return send(
          200,
          JSON.stringify({ x402Version: 2, items, pagination: { limit, offset, total: TOTAL } }),
        );
      }
      case '/stuck/discovery/resources': // ignores offset, no total
        return send(200, JSON.stringify({ items: [item(1), item(2)] }));
      case '/broken/discovery/resources':
        return offset === 0
          ? send(200, JSON.stringify({ items: [item(0)], pagination: { total: 99 } }))
          : send(200, '<html>oops</html>');
      case '/scan': {
        const page = Number(url.searchParams.get('page'));
        const data = [
          {
            resource: `https://scan.example/${page}`,
            accepts: [{ network: 'base', maxAmountRequired: 0.5 }],
          },
        ];
        return send(
          200,
          JSON.stringify({ data, pagination: { page, page_size: 1, has_next_page: page < 2 } }),
        );
      }
      case '/.well-known/x402':
        return send(
          200,
          JSON.stringify({ version: 1, resources: ['https://o.example/a', 42, `${base}/own`] }),
        );
      case '/v2/x402/discovery/resources': {
        // Circle's page, served 2 items at a time from a recorded page of its published shape.
        const items = circlePage.items.slice(offset, offset + Math.min(limit, 2));
        const pagination = { limit: Math.min(limit, 2), offset, total: circlePage.items.length };
        return send(200, JSON.stringify({ x402Version: 2, items, pagination }));
      }
      case '/five-hundred':
        return send(500, '{}');
      default:
        return send(404, '{}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const allowLoopback = fetchJsonVia(
  createProber({ allow: parseCidrList('127.0.0.0/8'), maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 }),
);
const read = (argument: string) => readSource(allowLoopback, sourceSpecOf(argument, new Set()));

describe('listing sources', () => {
  it('pages a discovery list to its end, by total, even when the server caps the page size', async () => {
    requests.length = 0;
    const got = await read(`${base}/cdp/discovery/resources`);
    expect(got.listings).toHaveLength(TOTAL);
    expect(got.report).toEqual({ ok: true, items: TOTAL, note: `3 pages, ${TOTAL} items`, skipped: false });
    expect(requests[0]).toBe('/cdp/discovery/resources?type=http&limit=100&offset=0');
    expect(requests.at(-1)).toBe('/cdp/discovery/resources?type=http&limit=100&offset=40');
    expect(got.name).toBe(`127.0.0.1-${new URL(base).port}`);
  });

  it('stops a list that repeats itself, and keeps what a list gave before it broke', async () => {
    const stuck = await read(`${base}/stuck/discovery/resources`);
    expect(stuck.listings).toHaveLength(2);
    expect(stuck.report).toMatchObject({
      ok: false,
      items: 2,
      note: expect.stringMatching(/repeats itself/),
    });
    const broken = await read(`${base}/broken/discovery/resources`);
    expect(broken.listings).toHaveLength(1);
    expect(broken.report).toMatchObject({
      ok: false,
      items: 1,
      note: expect.stringMatching(/offset 1: the answer is not JSON/),
    });
  });

  it("reads Circle's list by offset to its total, with each item's method, name, tags and description from its metadata", async () => {
    requests.length = 0;
    const got = await read(`circle:${base}/v2/x402/discovery/resources`);
    expect(requests).toEqual([
      '/v2/x402/discovery/resources?type=http&limit=100&offset=0',
      '/v2/x402/discovery/resources?type=http&limit=100&offset=2',
      '/v2/x402/discovery/resources?type=http&limit=100&offset=4',
    ]);
    // The MCP item is refused (not an http resource); the rest are read.
    expect(got.report).toMatchObject({ ok: true, items: 4 });
    const byUrl = new Map(got.listings.map((l) => [l.url, l]));
    expect(byUrl.get('https://quotes.example/v1/price')).toMatchObject({
      method: 'GET',
      priceUsd: 0.0025,
      network: 'eip155:8453',
      asset: BASE_USDC,
      payTo: '0x2222222222222222222222222222222222222222',
      source: `127.0.0.1-${new URL(base).port}`,
      metadata: {
        serviceName: 'Quotes Example',
        tags: ['markets', 'quotes'],
        description: 'The last traded price of a symbol.',
        iconUrl: null,
        lastUpdated: '2026-10-02T09:15:00.000Z',
      },
    });
    expect(byUrl.get('https://mail.example/send')).toMatchObject({
      method: 'POST',
      network: 'eip155:137',
      payTo: '0x3333333333333333333333333333333333333333',
      metadata: { serviceName: 'Mail Example', tags: ['email'], description: null },
    });
    // Without an endpoint description, the provider's; a field the item itself carries wins over its metadata.
    expect(byUrl.get('https://search.example/query')?.metadata).toMatchObject({
      description: 'Web search for agents.',
    });
    expect(byUrl.get('https://weather.example/today')?.metadata).toMatchObject({
      serviceName: 'Weather Today',
      description: "Today's weather for a city.",
    });
    expect(byUrl.has('https://tools.example/mcp')).toBe(false);
  });

  it('reads an x402scan-style list by shape, page by page', async () => {
    const got = await read(`${base}/scan`);
    expect(got.listings.map((l) => [l.url, l.priceUsd])).toEqual([
      ['https://scan.example/0', 0.5],
      ['https://scan.example/1', 0.5],
      ['https://scan.example/2', 0.5],
    ]);
    expect(got.report).toMatchObject({ ok: true, items: 3 });
  });

  it("reads an origin's /.well-known/x402 and counts the bad entries", async () => {
    const got = await read(`${base}/`);
    expect(got.listings.map((l) => l.url)).toEqual(['https://o.example/a', `${base}/own`]);
    expect(got.report).toMatchObject({ ok: true, items: 2, note: expect.stringMatching(/1 refused/) });
    // Only the URL of the document's own origin is first-party evidence.
    expect(got.listings.map((l) => l.firstParty === true)).toEqual([false, true]);
  });

  it('reports a failing source, never throws', async () => {
    expect((await read(`${base}/five-hundred`)).report).toEqual({
      ok: false,
      items: 0,
      note: 'answered HTTP 500',
      skipped: false,
    });
    expect((await read(`${base}/nothing-here`)).report.note).toBe('answered HTTP 404');
    expect((await read('/no/such/file.json')).report).toMatchObject({ ok: false, note: 'no such file' });
  });

  it('keeps the SSRF gate on for sources: loopback is refused without the allow list', async () => {
    const gated = fetchJsonVia(createProber({ maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 }));
    requests.length = 0;
    const got = await readSource(gated, sourceSpecOf(`${base}/cdp/discovery/resources`, new Set()));
    expect(got.report).toMatchObject({
      ok: false,
      items: 0,
      note: expect.stringMatching(/refused by the SSRF gate/),
    });
    expect(requests).toEqual([]);
  });

  it('reads a listings file, good records kept and bad ones counted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sc-src-'));
    try {
      const file = join(dir, 'My List.json');
      const good = { url: 'https://f.example/a', source: 'mine', price_usd: 0.01 };
      await writeFile(file, JSON.stringify([good, { url: 'https://f.example/b' }]));
      const got = await read(file);
      expect(got.name).toBe('my-list');
      expect(got.listings.map((l) => [l.url, l.source, l.priceUsd])).toEqual([
        ['https://f.example/a', 'mine', 0.01],
      ]);
      expect(got.report).toMatchObject({
        ok: true,
        items: 1,
        note: expect.stringMatching(/^1 item; 1 refused/),
      });
      await writeFile(file, '{not json');
      expect((await read(file)).report).toMatchObject({ ok: false, note: 'the file is not readable JSON' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names sources uniquely and honours a kind prefix', () => {
    const taken = new Set<string>();
    expect(sourceSpecOf('https://A.example/x', taken)).toEqual({
      name: 'a.example',
      kind: 'auto',
      location: 'https://A.example/x',
    });
    expect(sourceSpecOf('x402scan:https://a.example/y', taken)).toEqual({
      name: 'a.example-2',
      kind: 'x402scan',
      location: 'https://a.example/y',
    });
  });
});

describe('data/sources.json', () => {
  it("names the public CDP and PayAI discovery lists and Circle's list", async () => {
    const specs = parseSourceConfig(JSON.parse(await readFile('data/sources.json', 'utf8')));
    expect(specs.map((s) => [s.name, s.kind])).toEqual([
      ['cdp', 'discovery'],
      ['payai', 'discovery'],
      ['circle', 'circle'],
    ]);
    expect(() =>
      parseSourceConfig({ sources: [{ name: 'Bad Name', kind: 'discovery', url: 'https://x' }] }),
    ).toThrow(TypeError);
  });
});
