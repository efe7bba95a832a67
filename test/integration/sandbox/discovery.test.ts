/**
 * The sandbox discovery server, read by the crawl's own source adapters through the real SSRF-gated prober
 * (loopback allowed as PROBE_ALLOW_CIDRS does), and its deliberately wrong listings judged by the verdict rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeChallenge } from '../../../core/challenge.ts';
import type { SourceListing } from '../../../core/source-listing.ts';
import { parseCidrList } from '../../../core/ssrf.ts';
import { decide } from '../../../core/verdict.ts';
import { fetchJsonVia, SOURCE_MAX_BYTES } from '../../../crawl/sources/fetch-json.ts';
import { readSource, sourceSpecOf } from '../../../crawl/sources/read-source.ts';
import { createProber } from '../../../io/probe/prober.ts';
import { type DiscoveryServer, startDiscovery } from '../../../sandbox/discovery.ts';
import { type SellerFleet, startSellers } from '../../../sandbox/sellers/index.ts';

const allow = parseCidrList('127.0.0.0/8');
const prober = createProber({ allow, timeoutMs: 5000 });
const fetchJson = fetchJsonVia(createProber({ allow, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: 5000 }));
let fleet: SellerFleet;
let discovery: DiscoveryServer;

beforeAll(async () => {
  fleet = await startSellers();
  discovery = await startDiscovery({ sellers: fleet.urls, payTo: fleet.payTo, pageLimit: 7 });
});
afterAll(async () => {
  await discovery?.close();
  await fleet?.close();
});

const read = (argument: string) => readSource(fetchJson, sourceSpecOf(argument, new Set()));

async function verdictFor(listing: SourceListing) {
  const outcome = await prober.probe(listing.url, listing.method);
  const challenge = outcome.kind === 'response' ? decodeChallenge(outcome.response) : null;
  const request = {
    url: listing.url,
    method: listing.method,
    claimedPrice: null,
    payTo: null,
    network: null,
    checkExpiry: false,
    skewS: 30,
  };
  return decide({ outcome, challenge, request, listing, now: new Date() });
}

describe('sandbox discovery server', () => {
  it('serves every seller as a paged CDP-shaped list', async () => {
    const cdp = await read(discovery.cdpUrl);
    expect(cdp.report).toMatchObject({ ok: true, items: discovery.listed.length, skipped: false });
    expect(cdp.report.note).toMatch(new RegExp(`^${Math.ceil(discovery.listed.length / 7)} pages`));
    expect(new Set(cdp.listings.map((l) => l.url))).toEqual(new Set(discovery.listed.map((l) => l.url)));
    expect(cdp.listings.find((l) => l.url === fleet.urls['sdk-post'])?.method).toBe('POST');
  });

  it('serves an x402scan-shaped list with USD prices, and a broken list that is reported', async () => {
    const scan = await read(discovery.x402scanUrl);
    expect(scan.report).toMatchObject({ ok: true, items: 5 });
    expect(scan.listings.every((l) => l.priceUsd === 0.01)).toBe(true);
    expect((await read(discovery.brokenUrl)).report).toMatchObject({ ok: false, items: 0 });
  });

  it('lists a seller that answers 402 only with its example parameters', async () => {
    const cdp = await read(discovery.cdpUrl);
    const needs = cdp.listings.find((l) => l.url.endsWith('/sellers/needs-params'))!;
    expect(needs.example).toEqual({ query: { city: 'paris' }, body: null });
    const bare = await prober.probe(needs.url, 'GET');
    expect(bare.kind === 'response' && bare.response.status).toBe(400);
    const withExample = await prober.probe(`${needs.url}?city=paris`, 'GET');
    expect(withExample.kind === 'response' && withExample.response.status).toBe(402);
  });

  it('has listings whose price, wallet or network differ from the live 402', async () => {
    const cdp = await read(discovery.cdpUrl);
    const byName = (name: string) => cdp.listings.find((l) => l.url === fleet.urls[name as 'sdk-ok'])!;
    expect((await verdictFor(byName('sdk-expensive'))).reason).toBe('price_mismatch');
    expect((await verdictFor(byName('pay-to-listing'))).reason).toBe('pay_to_mismatch');
    expect((await verdictFor(byName('v1-only'))).reason).toBe('network_mismatch');
    expect((await verdictFor(byName('sdk-ok'))).reason).toBe('price_ok');
    const differs = discovery.listed.filter((l) => l.differs !== null).map((l) => [l.name, l.differs]);
    expect(differs).toEqual([
      ['sdk-expensive', 'price'],
      ['v1-only', 'network'],
      ['pay-to-listing', 'pay_to'],
    ]);
  });
});
