/**
 * A loopback catalog shaped like the public ones (docs/decisions.md "The crawl"): one host holding most listings,
 * a few small hosts, items with every published field (`sandbox/catalog-items.ts`), a CDP-shaped list and a
 * list in Circle's shape listing some of the same endpoints, and sellers that end before their
 * paywall in each way `core/probe-state.ts` names, one that asks to be left alone (429 with `Retry-After` once), and
 * one whose 402 carries terms in both header and body (the header is judged). `remove` takes listings out, for a
 * second crawl that finds them delisted. Every request's User-Agent is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BASE, BASE_USDC } from '../core/networks.ts';
import { type CatalogItemSpec, catalogItem, networkForms } from './catalog-items.ts';
import { ATTACKER_WALLET, BASE_USDC_TOKEN, FLEET_WALLET } from './sellers/constants.ts';
import {
  base64Json,
  send,
  sendJson,
  sendV2,
  v1Accept,
  v1Required,
  v2Accept,
  v2Required,
} from './sellers/wire.ts';

/** What the catalog lists about one endpoint, and what its seller does. */
export type CatalogSeller = CatalogItemSpec & {
  /** The probe state a crawl should find, or null for a seller that reaches its paywall. */
  expectState: string | null;
  /** Listed in the Circle-shaped list as well. */
  alsoCircle?: boolean;
};

export type RealCatalog = {
  /** The CDP-shaped list and the Circle-shaped list. */
  cdpUrl: string;
  circleUrl: string;
  /** The dominant host and the small ones (`host:port`). */
  dominant: string;
  small: string[];
  entries: CatalogSeller[];
  /** Requests each seller path got, by URL. */
  hits: Map<string, number>;
  /** Every User-Agent seen by the sellers. */
  userAgents: Set<string>;
  /** Takes listings out of both lists (a second crawl finds them delisted). */
  remove(urls: readonly string[]): void;
  close(): Promise<void>;
};

const SMALL_HOSTS = 3;

/** Starts the catalog: the dominant host (lists and most sellers) and three small seller hosts. */
export async function startRealCatalog(): Promise<RealCatalog> {
  const hits = new Map<string, number>();
  const userAgents = new Set<string>();
  const listed: CatalogSeller[] = [];
  const removed = new Set<string>();
  const handler = (req: IncomingMessage, res: ServerResponse, origin: string) => {
    const url = new URL(req.url ?? '/', origin);
    if (url.pathname === '/discovery/resources') return cdpPage(res, url, live());
    if (url.pathname === '/circle/resources') return circlePage(res, url, live());
    userAgents.add(req.headers['user-agent'] ?? '');
    const key = `${origin}${url.pathname}`;
    const n = (hits.get(key) ?? 0) + 1;
    hits.set(key, n);
    return seller(req, res, url, n);
  };
  const live = () => listed.filter((e) => !removed.has(e.url));
  const servers: Server[] = [];
  const origins: string[] = [];
  for (let i = 0; i <= SMALL_HOSTS; i++) {
    const server = createServer((req, res) => handler(req, res, origins[i] as string));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    origins.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  const [dominant, ...small] = origins as [string, ...string[]];
  listed.push(...entriesOf(dominant, small));
  return {
    cdpUrl: `${dominant}/discovery/resources`,
    circleUrl: `${dominant}/circle/resources`,
    dominant: new URL(dominant).host,
    small: small.map((o) => new URL(o).host),
    entries: listed,
    hits,
    userAgents,
    remove: (urls) => {
      for (const url of urls) removed.add(url);
    },
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}

/** The catalog's listings: most on the dominant host, every cold-probe failure, every network form. */
function entriesOf(dominant: string, small: string[]): CatalogSeller[] {
  const pay = (url: string, extra: Partial<CatalogSeller> = {}): CatalogSeller => ({
    url,
    options: [{ network: BASE, asset: BASE_USDC, payTo: FLEET_WALLET, amount: '10000' }],
    expectState: null,
    ...extra,
  });
  const entries: CatalogSeller[] = [];
  for (let i = 0; i < 12; i++)
    entries.push(
      pay(`${dominant}/pay/${i}`, {
        serviceName: `Dominant service ${i}`,
        tags: ['sandbox', i % 2 === 0 ? 'even' : 'odd'],
        description: `Paid resource ${i} of the dominant host.`,
        iconUrl: `${dominant}/icon.png`,
        lastUpdated: 1_772_366_400 + i,
        alsoCircle: i < 3,
        ...(i === 5
          ? {
              x402Version: 1 as const,
              options: [
                { network: 'base', asset: BASE_USDC, payTo: FLEET_WALLET, maxAmountRequired: '10000' },
              ],
            }
          : {}),
      }),
    );
  entries.push(
    pay(`${dominant}/needs-input`, { expectState: 'needs_input', query: { city: 'nowhere' } }),
    pay(`${dominant}/auth`, { expectState: 'access_denied' }),
    pay(`${dominant}/gone`, { expectState: 'not_found' }),
    pay(`${dominant}/post-only`, { expectState: 'method_not_allowed' }),
    pay(`${dominant}/broken`, { expectState: 'server_error' }),
    pay(`${dominant}/free`, { expectState: 'answered_without_paywall' }),
    pay(`${dominant}/limited`, { expectState: null, alsoCircle: true }),
    pay(`${dominant}/header-and-body`, { expectState: null }),
  );
  // The last small host lists one endpoint (a test may opt it out).
  entries.push(pay(`${small[2]}/pay`, { serviceName: 'Small host' }));
  // Every network and asset form, each on a seller that answers 402 on Base (the listing is what is read).
  for (const [i, form] of networkForms(FLEET_WALLET).entries()) {
    const host = small[i % 2] as string;
    entries.push({
      url: `${host}/form/${i}`,
      ...('version' in form ? { x402Version: form.version } : {}),
      options: [{ ...form.option }],
      serviceName: form.label,
      expectState: null,
    });
  }
  return entries;
}

/** The CDP-shaped page: `limit` (at most 7, so the crawl pages) from `offset`, with the total. */
function cdpPage(res: ServerResponse, url: URL, entries: CatalogSeller[]): void {
  const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 7) || 7, 1), 7);
  const offset = Math.max(Number(url.searchParams.get('offset') ?? 0) || 0, 0);
  const items = entries.slice(offset, offset + limit).map(catalogItem);
  sendJson(res, 200, { x402Version: 2, items, pagination: { limit, offset, total: entries.length } });
}

/**
 * The Circle-shaped page (docs/decisions.md "Circle's discovery list"): the entries listed there too, 2 a page by
 * `offset`, with `pagination.total`; each item's method, description, service name and tags under `metadata`.
 */
function circlePage(res: ServerResponse, url: URL, entries: CatalogSeller[]): void {
  const circle = entries.filter((e) => e.alsoCircle === true);
  const offset = Math.max(Number(url.searchParams.get('offset') ?? 0) || 0, 0);
  const items = circle.slice(offset, offset + 2).map((entry) => {
    const { serviceName, tags, description, ...item } = catalogItem(entry);
    const provider = { ...(serviceName === undefined ? {} : { name: serviceName }), tags };
    return { ...item, metadata: { provider, method: entry.method ?? 'GET', description, siwx: false } };
  });
  sendJson(res, 200, { x402Version: 2, items, pagination: { limit: 2, offset, total: circle.length } });
}

/** The sellers: each path one behaviour; `n` is how many requests this URL got so far. */
function seller(req: IncomingMessage, res: ServerResponse, url: URL, n: number) {
  const required = () => v2Required(url.href, [v2Accept(BASE, BASE_USDC_TOKEN, FLEET_WALLET)]);
  switch (url.pathname) {
    case '/needs-input':
      return sendJson(res, 400, { error: 'city must be a real city' });
    case '/auth':
      return sendJson(res, 401, { error: 'log in first' });
    case '/gone':
      return sendJson(res, 404, { error: 'not found' });
    case '/post-only':
      return sendJson(res, 405, { error: 'method not allowed' });
    case '/broken':
      return sendJson(res, 500, { error: 'oops' });
    case '/free':
      return sendJson(res, 200, { weather: 'sunny' });
    case '/limited':
      // Asks to be left alone for a second the first time, then shows its paywall.
      if (n === 1) return send(res, 429, { 'retry-after': '1', 'content-type': 'text/plain' }, 'slow down');
      return sendV2(res, required());
    case '/header-and-body': {
      // Terms in the header (judged) and other terms in a v1 body (another wallet): the header wins.
      const body = v1Required([v1Accept(url.href, 'base', BASE_USDC_TOKEN, ATTACKER_WALLET)]);
      const header = base64Json(required());
      return send(
        res,
        402,
        { 'content-type': 'application/json', 'payment-required': header },
        JSON.stringify(body),
      );
    }
    default:
      if (req.method === 'GET' || req.method === 'POST') return sendV2(res, required());
      return sendJson(res, 405, { error: 'method not allowed' });
  }
}
