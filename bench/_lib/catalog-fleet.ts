/**
 * The catalog-shaped fleet of `bench/crawl-catalog.ts`, in a process of its own (forked by the bench): a discovery
 * list and its sellers shaped like the public catalogs (docs/decisions.md "The crawl"): one host holds 72 % of the
 * listings, the others are heavy-tailed (host k of the rest weighs 1/k), and the list carries duplicates, POST-only
 * endpoints (405 on GET), listings that say POST, dead hosts (connection refused), slow endpoints (past the crawl's
 * 5 s timeout), 404s, 400s, 503s, and a few hosts that answer 429 with `Retry-After: 1` once per URL. Items carry
 * every published field (`sandbox/catalog-items.ts`), one in eight priced by `maxAmountRequired` (v1), a few on
 * other networks. Deterministic for a given size.
 *
 * Over IPC: `{ type: 'start', listings, hosts, dominantMs }` answers the list's URL and the figures the bound is
 * computed from; `{ type: 'stats' }` answers what the sellers saw. The fleet exits when the bench goes away.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BASE, BASE_USDC } from '../../core/networks.ts';
import { type CatalogItemSpec, catalogItem, networkForms } from '../../sandbox/catalog-items.ts';
import { BASE_USDC_TOKEN, FLEET_WALLET } from '../../sandbox/sellers/constants.ts';
import { send, sendJson, sendV2, v2Accept, v2Required } from '../../sandbox/sellers/wire.ts';

/** What a seller path does. */
type Kind = 'pay' | 'post' | 'slow' | 'gone' | 'input' | 'unavailable';

/** Past the crawl's 5 s probe timeout. */
const SLOW_MS = 7000;
/** What a slow request costs a host's slot: the crawl's timeout. */
const TIMEOUT_COST_MS = 5000;

/** What the bench computes the bound from, and what the catalog holds. */
export type CatalogFleet = {
  type: 'catalog';
  catalogUrl: string;
  listings: number;
  unique: number;
  hosts: number;
  deadHosts: number;
  dominant: { host: string; unique: number; latencyMs: number; boundMs: number };
  /** The largest estimated bound of any other host (its requests' time over 3 slots). */
  otherBoundMs: number;
  kinds: Record<string, number>;
};

export type CatalogStats = {
  type: 'stats';
  maxInFlight: number;
  paymentHeaders: number;
  connections: number;
  requests: number;
  dominantRequests: number;
  /**
   * Share of the dominant host's 3 slots left without a request, from its first request to its last answer, as the
   * host sees it (per cent): the time the crawl lost between an answer and the next request.
   */
  dominantIdlePct: number;
};

let maxInFlight = 0;
let paymentHeaders = 0;
let connections = 0;
let requests = 0;
let dominantRequests = 0;
/** The dominant host's requests in flight, when that last changed, and its slot-milliseconds held and spanned. */
const dominantSlots = { inFlight: 0, since: 0, first: -1, held: 0, last: 0 };

/** Counts the time the dominant host's slots were held, whenever its requests in flight change by `delta`. */
function dominantChange(delta: number): void {
  const now = performance.now();
  if (dominantSlots.first < 0) dominantSlots.first = now;
  dominantSlots.held += Math.min(3, dominantSlots.inFlight) * (now - dominantSlots.since);
  dominantSlots.inFlight += delta;
  dominantSlots.since = now;
  dominantSlots.last = now;
}

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Listings per host: the dominant host's share first, then 1/k over the rest, every host at least one. */
function hostCounts(listings: number, hosts: number): number[] {
  const dominant = Math.round(listings * 0.72);
  const rest = listings - dominant;
  const small = hosts - 1;
  const counts = [dominant, ...Array.from({ length: small }, () => 1)];
  const extra = rest - small;
  let harmonic = 0;
  for (let k = 1; k <= small; k++) harmonic += 1 / k;
  let given = 0;
  for (let k = 1; k <= small; k++) {
    const n = Math.floor((extra * (1 / k)) / harmonic);
    counts[k] = (counts[k] as number) + n;
    given += n;
  }
  for (let k = 1; given < extra; k++, given++) counts[k] = (counts[k] as number) + 1;
  return counts;
}

/** Starts the sellers and the list. */
async function startCatalog(listings: number, hostCount: number, dominantMs: number): Promise<CatalogFleet> {
  const rand = prng(31);
  const counts = hostCounts(listings, hostCount);
  const servers: Server[] = [];
  const origins: string[] = [];
  const latencies: number[] = [];
  const dead = (k: number) => k % 40 === 7;
  const limited = (k: number) => k % 97 === 3;
  for (let k = 0; k < hostCount; k++) {
    const latencyMs = k === 0 ? dominantMs : 20 + ((k * 7919) % 181);
    latencies.push(latencyMs);
    const seen = new Set<string>();
    let inFlight = 0;
    const server = createServer((req, res) => {
      requests++;
      if (k === 0) {
        dominantRequests++;
        dominantChange(1);
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // In flight until answered or given up by the crawl (a slow answer outlives the crawl's timeout).
      res.once('close', () => {
        inFlight--;
        if (k === 0) dominantChange(-1);
      });
      if (req.headers['payment-signature'] !== undefined || req.headers['x-payment'] !== undefined)
        paymentHeaders++;
      req.resume();
      const path = req.url ?? '/';
      const first = !seen.has(path);
      seen.add(path);
      const kind = path.split('/')[1] as Kind;
      setTimeout(
        () => {
          if (!res.destroyed) answer(req, res, kind, limited(k) && first);
        },
        kind === 'slow' ? SLOW_MS : latencyMs,
      );
    });
    server.on('connection', () => connections++);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', 1024, done));
    origins.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    servers.push(server);
  }
  // Dead hosts: the port was listening, and is closed now (connection refused).
  for (let k = 1; k < hostCount; k++) if (dead(k)) (servers[k] as Server).close();

  const items: CatalogItemSpec[] = [];
  const kinds: Record<string, number> = {};
  const unique = new Set<string>();
  const hostCost = new Array<number>(hostCount).fill(0);
  const forms = networkForms(FLEET_WALLET);
  for (let k = 0; k < hostCount; k++) {
    const listed: CatalogItemSpec[] = [];
    for (let i = 0; i < (counts[k] as number); i++) {
      // About 3 % of listings repeat one already listed, word for word (the public lists carry duplicates).
      if (listed.length > 0 && rand() < 0.03) {
        items.push(listed[Math.floor(rand() * listed.length)] as CatalogItemSpec);
        kinds['duplicate'] = (kinds['duplicate'] ?? 0) + 1;
        continue;
      }
      const kind: Kind = k === 0 ? 'pay' : pickKind(rand());
      const url = `${origins[k]}/${kind}/${i}`;
      unique.add(url);
      const listedPost = kind === 'pay' && k !== 0 && rand() < 0.02;
      const item = itemFor(url, kind, rand, forms, listedPost);
      listed.push(item);
      items.push(item);
      const tag = dead(k) ? 'dead' : listedPost ? 'listed_post' : kind;
      kinds[tag] = (kinds[tag] ?? 0) + 1;
      const latency = latencies[k] as number;
      hostCost[k] =
        (hostCost[k] as number) +
        (dead(k) ? 0 : kind === 'slow' ? TIMEOUT_COST_MS : kind === 'post' ? 2 * latency : latency) +
        (limited(k) ? latency : 0);
    }
  }
  // Listed in a mixed order, as the public lists are.
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j] as CatalogItemSpec, items[i] as CatalogItemSpec];
  }
  const catalog = createServer((req, res) => page(req, res, items));
  await new Promise<void>((done) => catalog.listen(0, '127.0.0.1', done));
  const dominantUnique = [...unique].filter((u) => u.startsWith(`${origins[0]}/`)).length;
  let otherBoundMs = 0;
  for (let k = 1; k < hostCount; k++)
    otherBoundMs = Math.max(otherBoundMs, (hostCost[k] as number) / 3 + (limited(k) ? 1000 : 0));
  return {
    type: 'catalog',
    catalogUrl: `http://127.0.0.1:${(catalog.address() as AddressInfo).port}/discovery/resources`,
    listings: items.length,
    unique: unique.size,
    hosts: hostCount,
    deadHosts: Array.from({ length: hostCount }, (_, k) => k > 0 && dead(k)).filter(Boolean).length,
    dominant: {
      host: new URL(origins[0] as string).host,
      unique: dominantUnique,
      latencyMs: dominantMs,
      boundMs: Math.ceil(dominantUnique / 3) * dominantMs,
    },
    otherBoundMs: Math.round(otherBoundMs),
    kinds,
  };
}

/** The kind of a small host's listing: most pay, the rest fail before their paywall in each common way. */
function pickKind(r: number): Kind {
  if (r < 0.05) return 'post';
  if (r < 0.06) return 'slow';
  if (r < 0.08) return 'gone';
  if (r < 0.09) return 'input';
  if (r < 0.1) return 'unavailable';
  return 'pay';
}

/** One catalog item: Base USDC in most, one in eight v1 (`maxAmountRequired`), a few on other networks. */
function itemFor(
  url: string,
  kind: Kind,
  rand: () => number,
  forms: ReturnType<typeof networkForms>,
  listedPost = false,
): CatalogItemSpec {
  const r = rand();
  const base = {
    url,
    serviceName: `Service ${url.length % 97}`,
    tags: ['bench', kind],
    description: 'A paid resource of the catalog-shaped bench fleet.',
    lastUpdated: 1_772_366_400,
    ...(listedPost || kind === 'post' ? { method: 'POST' as const } : {}),
    ...(kind === 'input' ? { query: { city: 'Lisbon' } } : {}),
  };
  if (r < 0.125)
    return {
      ...base,
      x402Version: 1,
      options: [{ network: 'base', asset: BASE_USDC, payTo: FLEET_WALLET, maxAmountRequired: '10000' }],
    };
  if (r < 0.16) {
    const form = forms[Math.floor(rand() * forms.length)] as (typeof forms)[number];
    return {
      ...base,
      ...('version' in form ? { x402Version: form.version } : {}),
      options: [{ ...form.option }],
    };
  }
  return { ...base, options: [{ network: BASE, asset: BASE_USDC, payTo: FLEET_WALLET, amount: '10000' }] };
}

/** A seller's answer after its latency. */
function answer(req: IncomingMessage, res: ServerResponse, kind: Kind, askToWait: boolean) {
  if (askToWait) return send(res, 429, { 'retry-after': '1', 'content-type': 'text/plain' }, 'slow down');
  const url = `http://x${req.url}`;
  switch (kind) {
    case 'post':
      if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' });
      return sendV2(res, v2Required(url, [v2Accept(BASE, BASE_USDC_TOKEN, FLEET_WALLET)]));
    case 'gone':
      return sendJson(res, 404, { error: 'not found' });
    case 'input':
      return sendJson(res, 400, { error: 'city is required' });
    case 'unavailable':
      return sendJson(res, 503, { error: 'down for maintenance' });
    default:
      return sendV2(res, v2Required(url, [v2Accept(BASE, BASE_USDC_TOKEN, FLEET_WALLET)]));
  }
}

/** The CDP-shaped list: `limit` (at most 1000) from `offset`, with the total. */
function page(req: IncomingMessage, res: ServerResponse, items: CatalogItemSpec[]): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 100) || 100, 1), 1000);
  const offset = Math.max(Number(url.searchParams.get('offset') ?? 0) || 0, 0);
  const slice = items.slice(offset, offset + limit).map(catalogItem);
  sendJson(res, 200, { x402Version: 2, items: slice, pagination: { limit, offset, total: items.length } });
}

process.on(
  'message',
  (message: { type?: string; listings?: number; hosts?: number; dominantMs?: number }) => {
    if (message.type === 'start')
      void startCatalog(message.listings ?? 50_000, message.hosts ?? 2300, message.dominantMs ?? 50).then(
        (fleet) => process.send?.(fleet),
        (error: unknown) => process.send?.({ type: 'failed', message: String(error) }),
      );
    if (message.type === 'stats')
      process.send?.({
        type: 'stats',
        maxInFlight,
        paymentHeaders,
        connections,
        requests,
        dominantRequests,
        dominantIdlePct:
          dominantSlots.first < 0
            ? 0
            : 100 * (1 - dominantSlots.held / (3 * Math.max(1, dominantSlots.last - dominantSlots.first))),
      } satisfies CatalogStats);
  },
);
process.on('disconnect', () => process.exit(0));
