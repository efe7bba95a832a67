/**
 * The composition root: builds every part of the live service from a `Config` and wires the defaults. The entry
 * file (`api/main.ts`) serves what this returns; end-to-end tests start it on port 0 the same way.
 */
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTPFacilitatorClient } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { H3 } from 'h3';
import { toNodeHandler } from 'h3/node';
import { LIMITS } from '../core/limits.ts';
import { parseListings } from '../core/listings.ts';
import type { Signer } from '../core/receipt.ts';
import { parseCidrList } from '../core/ssrf.ts';
import { dataPaths } from '../io/data-paths.ts';
import { createBadgeRenderer } from '../io/documents/badge-image.ts';
import { type InboxHandler, watchInbox } from '../io/inbox.ts';
import { loadSigningKeys, readJwks } from '../io/keys.ts';
import { createOptOutSource, optOutPaths } from '../io/opt-out.ts';
import { createProbeCache } from '../io/probe/probe-cache.ts';
import { createProber, type Lookup, PROBE_BUDGET_MS, type Prober } from '../io/probe/prober.ts';
import { spotcheckUserAgent } from '../io/probe/user-agent.ts';
import { createWebhookPoster, type WebhookPoster } from '../io/probe/webhook-post.ts';
import { pooledRandom } from '../io/random-pool.ts';
import { createReceiptBodies } from '../io/receipts/bodies.ts';
import type { ReceiptFileWriter } from '../io/receipts/file-writer.ts';
import { createJournal, type Journal } from '../io/receipts/journal.ts';
import { createLedger, type Ledger } from '../io/receipts/ledger.ts';
import { createDelistings } from '../io/runs/delisted.ts';
import { type RunDelisting, watchPublishedRuns } from '../io/runs/ingest.ts';
import { runPaths } from '../io/runs/paths.ts';
import { loadSalt, loadServiceWallet } from '../io/secrets.ts';
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import type { AppDeps } from './deps.ts';
import { createHosted, type Hosted } from './hosted.ts';
import { createIdentity, type Identity } from './identity.ts';
import { OPERATOR_INBOX_PREFIX } from './operator.ts';
import { createPaidCallIntake } from './paid-call-intake.ts';
import { CHAIN_TIMEOUT_MS, type ChainReaderLike, chainReaderFromUrls } from './payment-status.ts';
import { recoverWithQuota } from './quota-use.ts';
import { createReputationLookup } from './reputation-lookup.ts';
import { createSales } from './sales.ts';
import { openState, type ServiceState } from './state.ts';
import { createWatcher, type Watcher } from './watcher.ts';
import { createSeller, type Seller } from './x402/seller.ts';

export type Service = {
  app: H3;
  deps: AppDeps;
  serviceWallet: { address: `0x${string}`; generated: boolean; keyFile: string | null };
  /** Ingests what waits in the inbox now (tests; the server also polls). */
  drainInbox(): Promise<void>;
  /** Takes in a newly published crawl run now (tests; the server also polls every 2 s). */
  takeInRuns(): Promise<void>;
  /** The watcher running in the background (its passes can also be run at once: tests). */
  watcher: Watcher;
  close(): Promise<void>;
};

/** Seams a test may replace; everything else is real. */
export type ServiceOverrides = {
  now?: () => Date;
  lookup?: Lookup;
  prober?: Prober;
  facilitator?: FacilitatorClient;
  /** The payment-status chain reader (null: none configured); default built from RPC_URLS. */
  chain?: ChainReaderLike | null;
  /** fdatasync journal batches (default true). */
  fsync?: boolean;
  /** Writes the receipt files (default: the ledger's background writer into `DATA_DIR/receipts`). */
  receiptFiles?: ReceiptFileWriter;
  /** Posts webhooks (default: through the SSRF gate with `PROBE_ALLOW_CIDRS`, `io/probe/webhook-post.ts`). */
  webhookPoster?: WebhookPoster;
  /** The watcher's pause between passes (default: a quarter of WATCH_INTERVAL_S, at most 1 s). */
  watchTickMs?: number;
};

/** Builds the service over `DATA_DIR` and recovers its state from the journal. */
export async function createService(config: Config, overrides: ServiceOverrides = {}): Promise<Service> {
  const now = overrides.now ?? (() => new Date());
  const paths = dataPaths(config.dataDir);
  await mkdir(paths.receipts, { recursive: true });
  const records = await openRecords(config, paths, now, overrides);
  const { journal, state, ledger, serviceWallet, keys } = records;
  await recoverWithQuota(ledger, state.journaledQuota, now());
  const hosted = await createHosted({
    store: state.integrators,
    journal,
    now,
    signer: () => keys.signer,
    payTo: serviceWallet.address,
    baseUrl: config.baseUrl,
    invoicesDir: paths.invoices,
    random: pooledRandom(),
    ...(state.sharedHosted ? { shared: state.sharedHosted } : {}),
    watchMonths: (startMs, endMs) => state.watches.watchMonths(startMs, endMs),
  });
  const deps = await appDeps(config, paths, overrides, { ...records, hosted, now });
  await deps.paidCalls?.refresh(true);

  const listings = listingsHandler(deps);
  // The operator CLIs' operations and listings files share the inbox; the file name tells them apart.
  const inbox = watchInbox(paths.inbox, (name, content) =>
    name.startsWith(OPERATOR_INBOX_PREFIX) ? hosted.apply(content) : listings(name, content),
  );
  // Started before the first crawl round, so a run taken in at start-up already tells the watches what it delisted.
  const watcher = startWatcher(config, overrides, deps, { ...records, now });
  const crawlRuns = watchPublishedRuns({
    store: state.store,
    paths: deps.runs.crawl,
    log: (line) => console.error(`[spotcheck] [crawl] ${line}`),
    onDelisted: (delisted) => tellWatchesDelisted(watcher, delisted),
  });
  await crawlRuns.poll();
  return {
    watcher,
    app: createApp(deps),
    deps,
    serviceWallet,
    drainInbox: () => inbox.drain(),
    takeInRuns: () => crawlRuns.poll(),
    async close() {
      await watcher.stop();
      crawlRuns.stop();
      await crawlRuns.poll();
      await inbox.stop();
      await ledger.checkpoint();
      await hosted.close();
      await journal.close();
      await state.store.close();
      await state.watches.close();
      await state.close();
    },
  };
}

type DataPaths = ReturnType<typeof dataPaths>;

/** What the service keeps: its keys and wallet, the journal, the state behind its ports, and the ledger over them. */
type Records = {
  keys: { signer: Signer };
  serviceWallet: Service['serviceWallet'];
  journal: Journal;
  identity: Identity;
  state: ServiceState;
  ledger: Ledger;
};

/** Loads the keys and opens the journal, the state and the ledger (not recovered yet). */
async function openRecords(
  config: Config,
  paths: DataPaths,
  now: () => Date,
  overrides: ServiceOverrides,
): Promise<Records> {
  const keys = await loadSigningKeys({
    dir: paths.keys,
    ...(config.signingKeyFile ? { keyFile: config.signingKeyFile } : {}),
  });
  const salt = await loadSalt(paths.keys);
  const serviceWallet = await loadServiceWallet(paths.keys, config.serviceWallet);
  const journal = await createJournal({ dir: paths.journal, fsync: overrides.fsync ?? true, now });
  const identity = createIdentity(salt);
  // The ledger keeps the bodies of its receipts (memory, then the file); the embedded index reads them from there.
  const bodies = createReceiptBodies(paths.receipts);
  const state = await openState(config, paths, now, identity.hash('installation', 'quota-salt'), bodies);
  const ledger = createLedger({
    signer: () => keys.signer,
    journal,
    store: state.store,
    receiptsDir: paths.receipts,
    checkpointFile: paths.checkpoint,
    bodies,
    ...(overrides.receiptFiles ? { files: overrides.receiptFiles } : {}),
    ...(state.committed ? { committed: state.committed } : {}),
  });
  return { keys, serviceWallet, journal, identity, state, ledger };
}

/** The routes' dependencies over the opened records: the prober, the seller and every reader they answer from. */
async function appDeps(
  config: Config,
  paths: DataPaths,
  overrides: ServiceOverrides,
  parts: Records & { hosted: Hosted; now: () => Date },
): Promise<AppDeps> {
  const { state, now } = parts;
  const { store } = state;
  return {
    prober: overrides.prober ?? serviceProber(config, now, overrides),
    probeCache: createProbeCache({
      ttlMs: LIMITS.probeReuseSeconds * 1000,
      maxEntries: 50_000,
      // About 128 MiB of headers and bodies: at the prober's caps one hostile entry holds ~0.25 M characters.
      maxChars: 64 * 1024 * 1024,
      now: () => now().getTime(),
    }),
    store,
    ledger: parts.ledger,
    now,
    random: pooledRandom(),
    baseUrl: config.baseUrl,
    gate: {
      trustProxy: config.trustProxy,
      trustedProxies: config.trustedProxies,
      exemptKeys: config.exemptKeys,
      quota: state.quota,
      identity: parts.identity,
    },
    sales: createSales(serviceSeller(config, overrides, parts), config.baseUrl),
    jwks: () => readJwks(paths.keys),
    reputation: createReputationLookup({
      source: store,
      now,
      onError: (error) => console.error('[spotcheck] [reputation] store unavailable', error),
    }),
    chain: overrides.chain !== undefined ? overrides.chain : chainReaderFromUrls(config.rpcUrls),
    runs: { crawl: runPaths(config.dataDir, 'crawl'), bazaar: runPaths(config.dataDir, 'bazaar') },
    delistings: createDelistings(runPaths(config.dataDir, 'crawl')),
    hosted: parts.hosted,
    paidCalls: createPaidCallIntake({
      paths: runPaths(config.dataDir, 'known-answers'),
      store,
      published: state.tasks,
      monotonic: () => performance.now(),
      log: (line) => console.error(`[spotcheck] ${line}`),
    }),
    site: { badges: await createBadgeRenderer(), dir: paths.site },
  };
}

/** `delisted` events for the watches of each endpoint a crawl run delisted (docs/api.md "Watches"). */
async function tellWatchesDelisted(watcher: Watcher, delisted: RunDelisting[]): Promise<void> {
  for (const entry of delisted) {
    await watcher.delisted(entry.url, entry.method, {
      run_id: entry.runId,
      source_list: entry.sourceList,
      delisted_at: entry.delistedAt,
    });
  }
}

/** Wires watches into `deps` (routes) and starts the watcher over the same check, ledger and key. */
function startWatcher(
  config: Config,
  overrides: ServiceOverrides,
  deps: AppDeps,
  parts: Records & { now: () => Date },
): Watcher {
  const poster =
    overrides.webhookPoster ??
    createWebhookPoster({
      allow: parseCidrList(config.probeAllowCidrs),
      userAgent: spotcheckUserAgent(config.baseUrl),
      ...(overrides.lookup ? { lookup: overrides.lookup } : {}),
    });
  const optOut = createOptOutSource(optOutPaths(config.dataDir));
  deps.watches = { store: parts.state.watches, poster, intervalSeconds: config.watchIntervalSeconds, optOut };
  const watcher = createWatcher({
    store: parts.state.watches,
    check: deps,
    signer: () => parts.keys.signer,
    baseUrl: config.baseUrl,
    random: deps.random,
    intervalSeconds: config.watchIntervalSeconds,
    leaseMs: config.watchLeaseMs,
    jitter: Math.random,
    log: (line) => console.error(`[spotcheck] [watches] ${line}`),
    poster,
    optOut,
    ...(overrides.watchTickMs === undefined ? {} : { tickMs: overrides.watchTickMs }),
  });
  watcher.start();
  return watcher;
}

/** The live check's prober: the SSRF gate with the operator's exemptions, connections kept per approved address. */
function serviceProber(config: Config, now: () => Date, overrides: ServiceOverrides): Prober {
  // A seller's next GET within a second takes the connection its last one left, to the same approved address.
  return createProber({
    allow: parseCidrList(config.probeAllowCidrs),
    userAgent: spotcheckUserAgent(config.baseUrl),
    now,
    reuseConnections: true,
    ...(overrides.lookup ? { lookup: overrides.lookup } : {}),
  });
}

/** The x402 seller of the paid routes, paid to the service wallet. */
function serviceSeller(
  config: Config,
  overrides: ServiceOverrides,
  parts: Pick<Records, 'serviceWallet' | 'state'> & { now: () => Date },
): Seller {
  const facilitator =
    overrides.facilitator ??
    (config.facilitatorUrl
      ? new HTTPFacilitatorClient({ url: config.facilitatorUrl })
      : missingFacilitator());
  // A paid handler is one probe (payment status reads the chain alongside it, within its own shorter budget), plus
  // store reads and the receipt; a second of slack covers those.
  const handlerBudgetSeconds = Math.ceil(Math.max(PROBE_BUDGET_MS, CHAIN_TIMEOUT_MS) / 1000) + 1;
  return createSeller({
    facilitator,
    payTo: parts.serviceWallet.address,
    now: parts.now,
    handlerBudgetSeconds,
    ...(parts.state.replayGuard ? { replayGuard: parts.state.replayGuard } : {}),
  });
}

/** Serves the service's app on a socket; resolves once listening. */
export async function listen(
  service: Service,
  host: string,
  port: number,
): Promise<{ server: Server; url: string }> {
  const bound = await bind(host, port);
  serve(bound.server, service);
  return bound;
}

/**
 * Holds a listening socket before the service behind it exists, for a caller that must know its own port to
 * configure the service (the demo's receipts name their origin): taking the port early leaves no window in which
 * another process can take it. Connections wait until {@link serve} attaches the service.
 */
export async function bind(host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer({ maxHeaderSize: 64 * 1024 });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `http://${shown}:${address.port}` };
}

/** Attaches the service to a server from {@link bind}. */
export function serve(server: Server, service: Service): void {
  server.on('request', toNodeHandler(service.app));
}

function listingsHandler(deps: AppDeps): InboxHandler {
  return async (name, content) => {
    const parsed = parseListings(JSON.parse(content));
    if (!parsed.ok) throw new Error(`${name}: ${parsed.message}`);
    const stored = await deps.store.importListings(parsed.rows);
    return `imported ${stored} listings`;
  };
}

/** Without FACILITATOR_URL the service still answers 402s; a payment attempt gets a 502 naming the setting. */
function missingFacilitator(): FacilitatorClient {
  const refuse = async (): Promise<never> => {
    throw new Error('No facilitator is configured: set FACILITATOR_URL to accept payments.');
  };
  return { verify: refuse, settle: refuse, getSupported: refuse };
}
