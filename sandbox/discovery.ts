/**
 * The sandbox's discovery server: the seller fleet as listing sources, on one loopback port.
 *
 * - `GET /discovery/resources?type=http&limit=&offset=`: the CDP shape (docs/x402.md §6.2), paged, at most
 *   `pageLimit` items a page (default 10, so a crawl of the fleet pages), v2 items with CDP's ISO `lastUpdated`.
 * - `GET /discovery/search?query=&limit=`: CDP's search shape (`{ resources, pagination }`), for the bazaar check.
 * - `GET /api/x402/resources?page=&page_size=`: the x402scan shape (`{ data, pagination }`, USD prices, v1 names).
 * - `GET /.well-known/x402`: a few sellers as an origin's document.
 * - `GET /broken/discovery/resources`: garbage (HTML), for a source that must be reported and not stop a crawl.
 * - `/sellers/needs-params`: a seller that answers 400 to a bare GET and 402 only with its listed example query.
 * - `/sellers/needs-body`: a POST seller that answers 400 to `{}` and 402 only with its listed example JSON body.
 *
 * Some listings deliberately differ from the live 402 (see {@link ListedSeller.differs}): a lower price, another
 * wallet, another network. Those are what the saves list is for.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Address,
  BASE,
  BASE_USDC_TOKEN,
  ONE_CENT,
  POLYGON,
  POLYGON_USDC_TOKEN,
} from './sellers/constants.ts';
import { send, sendJson, sendV2, v2Accept, v2Required } from './sellers/wire.ts';

/** What the discovery lists claim about one endpoint, and how that differs from its live 402. */
export type ListedSeller = {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  amount: string;
  payTo: string;
  network: string;
  /** `price`: listed below the live price; `pay_to`: another wallet; `network`: another network. */
  differs: 'price' | 'pay_to' | 'network' | null;
  /** Listed in the x402scan-style list too. */
  alsoX402scan: boolean;
  query?: Record<string, string>;
  /** The example JSON body of a POST listing (bazaar `info.input.body`, `bodyType: "json"`). */
  body?: Record<string, unknown>;
};

/** The example body `needs-body` is listed with, and the only body it answers 402 to. */
export const NEEDS_BODY_EXAMPLE = { prompt: 'hello', max_tokens: 16 };

export type DiscoveryOptions = {
  /** Seller URLs by name (the fleet's `urls`). */
  sellers: Record<string, string>;
  /** The honest sellers' wallet. */
  payTo: Address;
  /** Most items per CDP-shaped page; default 10. */
  pageLimit?: number;
};

export type DiscoveryServer = {
  /** Origin of the server (also an origin whose `/.well-known/x402` lists sellers). */
  url: string;
  cdpUrl: string;
  searchUrl: string;
  x402scanUrl: string;
  brokenUrl: string;
  listed: ListedSeller[];
  close(): Promise<void>;
};

const POST_SELLERS = new Set(['sdk-post', 'post-only']);
const X402SCAN_SELLERS = new Set([
  'sdk-ok',
  'sdk-two-options',
  'wrong-network',
  'not-usdc',
  'pay-to-listing',
]);

/** The listings of the fleet: honest for most sellers, deliberately off for three. */
export function fleetListings(sellers: Record<string, string>, payTo: string): ListedSeller[] {
  return Object.entries(sellers).map(([name, url]) => ({
    name,
    url,
    method: POST_SELLERS.has(name) ? 'POST' : 'GET',
    amount: ONE_CENT,
    // `pay-to-listing` asks LISTING_WALLET live; its listing names the fleet wallet.
    payTo,
    network: name === 'v1-only' ? POLYGON : BASE,
    differs:
      name === 'sdk-expensive'
        ? 'price'
        : name === 'pay-to-listing'
          ? 'pay_to'
          : name === 'v1-only'
            ? 'network'
            : null,
    alsoX402scan: X402SCAN_SELLERS.has(name),
  }));
}

/** Starts the discovery server on a free loopback port. */
export async function startDiscovery(options: DiscoveryOptions): Promise<DiscoveryServer> {
  const pageLimit = options.pageLimit ?? 10;
  const listed: ListedSeller[] = fleetListings(options.sellers, options.payTo);
  const server = createServer((req, res) => route(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  listed.push({
    name: 'needs-params',
    url: `${origin}/sellers/needs-params`,
    method: 'GET',
    amount: ONE_CENT,
    payTo: options.payTo,
    network: BASE,
    differs: null,
    alsoX402scan: false,
    query: { city: 'paris' },
  });
  listed.push({
    name: 'needs-body',
    url: `${origin}/sellers/needs-body`,
    method: 'POST',
    amount: ONE_CENT,
    payTo: options.payTo,
    network: BASE,
    differs: null,
    alsoX402scan: false,
    body: NEEDS_BODY_EXAMPLE,
  });

  function route(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', origin);
    const int = (name: string, fallback: number) => {
      const n = Number(url.searchParams.get(name) ?? fallback);
      return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
    };
    switch (url.pathname) {
      case '/discovery/resources': {
        const limit = Math.min(Math.max(int('limit', pageLimit), 1), pageLimit);
        const offset = int('offset', 0);
        const items = listed.slice(offset, offset + limit).map(cdpItem);
        return sendJson(res, 200, {
          x402Version: 2,
          items,
          pagination: { limit, offset, total: listed.length },
        });
      }
      case '/discovery/search': {
        const query = (url.searchParams.get('query') ?? '').toLowerCase();
        const limit = Math.min(Math.max(int('limit', 20), 1), 100);
        const found = listed.filter((l) => l.name.includes(query) || l.url.toLowerCase().includes(query));
        const resources = found.slice(0, limit).map(cdpItem);
        return sendJson(res, 200, { x402Version: 2, resources, pagination: { limit, cursor: null } });
      }
      case '/api/x402/resources': {
        const size = Math.min(Math.max(int('page_size', 3), 1), 3);
        const page = int('page', 0);
        const all = listed.filter((l) => l.alsoX402scan);
        const data = all.slice(page * size, page * size + size).map(x402scanItem);
        const pagination = { page, page_size: size, has_next_page: (page + 1) * size < all.length };
        return sendJson(res, 200, { data, pagination });
      }
      case '/.well-known/x402':
        return sendJson(res, 200, { version: 1, resources: listed.slice(0, 3).map((l) => l.url) });
      case '/broken/discovery/resources':
        return send(res, 200, { 'content-type': 'text/html' }, '<html><body>maintenance</body></html>');
      case '/sellers/needs-params':
        if (url.searchParams.get('city') === null)
          return sendJson(res, 400, { error: 'query parameter city is required' });
        return sendV2(res, v2Required(url.href, [v2Accept(BASE, BASE_USDC_TOKEN, options.payTo)]));
      case '/sellers/needs-body':
        return void readJson(req).then((body) => {
          const valid =
            req.method === 'POST' &&
            body?.prompt === NEEDS_BODY_EXAMPLE.prompt &&
            body?.max_tokens === NEEDS_BODY_EXAMPLE.max_tokens;
          if (!valid)
            return sendJson(res, 400, { error: 'a JSON body with prompt and max_tokens is required' });
          return sendV2(res, v2Required(url.href, [v2Accept(BASE, BASE_USDC_TOKEN, options.payTo)]));
        });
      default:
        return sendJson(res, 404, { error: 'not found' });
    }
  }

  return {
    url: origin,
    cdpUrl: `${origin}/discovery/resources`,
    searchUrl: `${origin}/discovery/search`,
    x402scanUrl: `${origin}/api/x402/resources`,
    brokenUrl: `${origin}/broken/discovery/resources`,
    listed,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A request's JSON object body, or null when it is not one (at most 64 KiB read). */
function readJson(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 65_536) chunks.push(chunk);
    });
    req.on('error', () => resolve(null));
    req.on('end', () => {
      try {
        const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        resolve(value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : null);
      } catch {
        resolve(null);
      }
    });
  });
}

/** A CDP discovery item (v2), with a bazaar input declaring the method and any example query or JSON body. */
function cdpItem(l: ListedSeller) {
  const input = {
    type: 'http',
    method: l.method,
    ...(l.query ? { queryParams: l.query } : {}),
    ...(l.body ? { bodyType: 'json', body: l.body } : {}),
  };
  return {
    resource: l.url,
    type: 'http',
    x402Version: 2,
    accepts: [
      {
        scheme: 'exact',
        network: l.network,
        amount: l.amount,
        asset: l.network === POLYGON ? POLYGON_USDC_TOKEN.asset : BASE_USDC_TOKEN.asset,
        payTo: l.payTo,
        maxTimeoutSeconds: 60,
        extra: { name: 'USD Coin', version: '2' },
      },
    ],
    lastUpdated: '2026-11-01T00:00:00.000Z',
    description: `sandbox seller ${l.name}`,
    extensions: { bazaar: { info: { input } } },
  };
}

/** An x402scan item: v1 network names and `maxAmountRequired` as a USD number (docs/x402.md §6.3). */
function x402scanItem(l: ListedSeller) {
  return {
    resource: l.url,
    method: l.method,
    type: 'http',
    x402Version: 2,
    lastUpdated: 1_793_491_200,
    accepts: [
      {
        scheme: 'exact',
        network: l.network === POLYGON ? 'polygon' : 'base',
        maxAmountRequired: Number(l.amount) / 1e6,
        payTo: l.payTo,
        asset: BASE_USDC_TOKEN.asset,
      },
    ],
  };
}
