/**
 * The crawl's politeness per server, not per name: one slow loopback server listed under 400 names (200 under one
 * wildcard domain, 200 domains of their own, every name resolving to 127.0.0.1 through the injected lookup) never
 * has more than the prober's per-address limit in flight, and never more than the scheduler's per-domain limit from
 * the names of one registrable domain. The real prober, SSRF gate on (loopback allowed only through the list, as
 * PROBE_ALLOW_CIDRS does), `runCrawl` as `npm run crawl` runs it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSourceListing } from '../../../core/source-listing.ts';
import { parseCidrList } from '../../../core/ssrf.ts';
import { registrableDomain } from '../../../crawl/registrable-domain.ts';
import { PER_DOMAIN, runCrawl } from '../../../crawl/run.ts';
import type { SourceRead } from '../../../crawl/sources/_result.ts';
import { loadSigningKeys } from '../../../io/keys.ts';
import { MAX_IN_FLIGHT_PER_ADDRESS } from '../../../io/probe/address-slots.ts';
import { createProber } from '../../../io/probe/prober.ts';
import { runPaths } from '../../../io/runs/paths.ts';
import { type RawServer, startHttpServer } from '../../fixtures/raw-server.ts';

let server: RawServer;
let dir: string;
const load = {
  inFlight: 0,
  most: 0,
  byDomain: new Map<string, number>(),
  mostByDomain: new Map<string, number>(),
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-crawl-polite-'));
  server = await startHttpServer((req, res) => {
    const domain = registrableDomain(String(req.headers.host));
    load.inFlight++;
    load.most = Math.max(load.most, load.inFlight);
    const n = (load.byDomain.get(domain) ?? 0) + 1;
    load.byDomain.set(domain, n);
    load.mostByDomain.set(domain, Math.max(load.mostByDomain.get(domain) ?? 0, n));
    // A slow server: every answer leaves 15 ms after its request came.
    setTimeout(() => {
      load.inFlight--;
      load.byDomain.set(domain, (load.byDomain.get(domain) ?? 1) - 1);
      res.writeHead(404).end();
    }, 15);
  });
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

function source(urls: string[]): SourceRead {
  const listings = urls.flatMap((url) => {
    const made = parseSourceListing({ url, method: 'GET', option: null, source: 'wild', example: null });
    return made.ok ? [made.listing] : [];
  });
  return { name: 'wild', listings, report: { ok: true, items: listings.length, note: '', skipped: false } };
}

describe('crawl politeness per server', () => {
  it('a server under 400 names stays within the per-address cap, a wildcard domain within its own', {
    timeout: 60_000,
  }, async () => {
    const port = server.port;
    const urls = [
      ...Array.from({ length: 200 }, (_, i) => `http://n${i}.wild.example:${port}/paid`),
      ...Array.from({ length: 200 }, (_, i) => `http://shop${i}.example:${port}/paid`),
    ];
    const { signer } = await loadSigningKeys({ dir: join(dir, 'keys') });
    const result = await runCrawl(
      {
        paths: runPaths(dir, 'crawl'),
        // As crawl/cli-deps.ts builds it; every name resolves to the one loopback server.
        prober: createProber({
          allow: parseCidrList('127.0.0.0/8'),
          lookup: async () => [{ address: '127.0.0.1', family: 4 }],
          timeoutMs: 5000,
          reuseConnections: true,
          addressQueueMs: Number.POSITIVE_INFINITY,
        }),
        signer,
        now: () => new Date(),
        random: (n) => new Uint8Array(randomBytes(n)),
        baseUrl: 'http://127.0.0.1:8402',
        readSources: async () => [source(urls)],
        monotonic: () => performance.now(),
        progressOut: { write: () => true, isTTY: false },
        log: () => {},
      },
      { resume: false, concurrency: null, limit: null },
    );
    expect(result.total).toBe(400);
    expect(server.seen).toHaveLength(400);
    expect(load.most).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ADDRESS);
    expect(load.mostByDomain.get('wild.example')).toBeLessThanOrEqual(PER_DOMAIN);
    expect(Math.max(...[...load.mostByDomain].filter(([d]) => d !== 'wild.example').map(([, n]) => n))).toBe(
      1,
    );
  });
});
