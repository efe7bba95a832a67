/**
 * `npm run demo -- [--once] [--port <n>] [--data-dir <dir>]`: the whole product working offline against the
 * sandbox world (docs/demo.md). Starts the world and the service in this process, imports listings, checks a
 * handful of sellers, pays one check with the official x402 client, verifies a receipt with the auditors'
 * verifier, prints the URLs to open, and runs until Ctrl-C (`--once`: exits 0 after the tour, for CI).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import * as v from 'valibot';
import { privateKeyToAccount } from 'viem/accounts';
import { readConfig } from '../api/config.ts';
import { bind, createService, serve } from '../api/service.ts';
import { LIMITS } from '../core/limits.ts';
import { dataPaths } from '../io/data-paths.ts';
import { publishToInbox } from '../io/inbox.ts';
import { verifyReceipt } from '../verify/verify.ts';
import { AGENT_ADDRESS, keylessAgent } from './demo-agent.ts';
import { crawlTour } from './demo-crawl.ts';
import { tourKnownAnswers } from './demo-known-answers.ts';
import { buildDemoSite } from './demo-site.ts';
import type { SellerName } from './sellers/index.ts';
import { startWorld, type World } from './world.ts';

const CHECK_PATH = '/v1/products/endpoint-spot-check';
/** A wallet no seller uses: a listing that names it makes the live 402 a `pay_to_mismatch`. */
const STALE_LISTING_WALLET = '0x000000000000000000000000000000000000dEaD';

/** The sellers the tour checks, with the request parameters that make each one interesting. */
const TOUR: Array<{ name: SellerName; params?: Record<string, string>; note: string }> = [
  { name: 'sdk-ok', note: 'official SDK seller; listed at $0.05, asks $0.01' },
  { name: 'sdk-expensive', params: { claimed_price: '0.01' }, note: 'listed at $0.01, asks $0.50' },
  { name: 'hostile-first', note: 'option 1 is a look-alike token to an attacker; option 2 approved' },
  { name: 'v1-only', note: 'the listing names another wallet' },
  { name: 'not-usdc', note: 'asks DAI on Base' },
  { name: 'wrong-network', note: 'asks Polygon USDC only' },
  { name: 'free-trial', note: 'sends X-Free-Trial-Remaining' },
  { name: 'no-paywall', note: 'answers 200, no 402' },
  { name: 'server-error', note: 'answers 503' },
  { name: 'broken-header', note: 'PAYMENT-REQUIRED is not base64' },
  { name: 'short-lived', params: { check_expiry: '1' }, note: 'challenge expires in 5 s' },
  { name: 'redirect-private', note: 'redirects to 10.0.0.1' },
];

/** The part of the paid answer (docs/api.md §2.1) the tour prints. */
const PaidAnswer = v.object({
  verdict: v.string(),
  receipt_id: v.string(),
  payment: v.nullable(v.object({ amount: v.object({ atomic: v.string() }), pay_to: v.string() })),
  access: v.object({
    tier: v.literal('paid'),
    charged_usd: v.string(),
    tx: v.pipe(v.string(), v.regex(/^0x[0-9a-f]{64}$/u)),
  }),
});

const { values } = parseArgs({
  options: {
    once: { type: 'boolean', default: false },
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});
if (values.help) {
  out('usage: npm run demo -- [--once] [--port <n>] [--data-dir <dir>]');
  process.exit(0);
}

const cleanups: Array<() => Promise<void>> = [];
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    // One line (after the terminal's `^C`); what the stop itself hits (children the terminal signalled too) is quiet.
    out(`${process.stdout.isTTY ? '\n' : ''}${signal}: stopping the service and the sandbox world…`);
    void shutdown(0, true);
  });
}

try {
  await tour();
  if (values.once) await shutdown(0);
  else out('Running until Ctrl-C.');
} catch (error) {
  // Ctrl-C during the tour closes the service under its feet: that is a stop, not a failure.
  if (!stopping) {
    process.stderr.write(
      `demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    await shutdown(1);
  }
}

async function tour(): Promise<void> {
  out('Spotcheck demo: the whole product on loopback, offline.\n');
  // The port first: a taken `--port` fails before anything starts, and the port is held until the service
  // (configured with it, since receipts name their origin) is attached.
  const bound = await bindPort();
  cleanups.push(() => closeServer(bound.server));
  let started = performance.now();
  const world = await startWorld();
  cleanups.push(() => world.stop());
  const { state } = world;
  out(`[1/9] Sandbox world up in ${ms(started)}: anvil (chain 8453, Circle FiatToken at Base USDC),`);
  out(
    `      the x402 SDK facilitator at ${state.facilitatorUrl}, ${Object.keys(state.sellers).length} sellers.`,
  );

  started = performance.now();
  const { service, config, url, exemptSecret } = await startService(world, bound);
  out(`[2/9] Service up in ${ms(started)} at ${url}, paid into ${state.serviceWallet}.`);
  out(
    '      PROBE_ALLOW_CIDRS=127.0.0.0/8: loopback passes the SSRF gate for this demo only; never in production.',
  );

  const listings = [
    { url: world.sellers.urls['sdk-ok'], price_usd: 0.05, network: 'eip155:8453', pay_to: state.sellerPayTo },
    {
      url: world.sellers.urls['sdk-expensive'],
      price_usd: 0.01,
      network: 'eip155:8453',
      pay_to: state.sellerPayTo,
    },
    {
      url: world.sellers.urls['v1-only'],
      price_usd: 0.01,
      network: 'eip155:8453',
      pay_to: STALE_LISTING_WALLET,
    },
  ].map((listing) => ({ ...listing, source: 'demo' }));
  await publishToInbox(dataPaths(config.dataDir).inbox, 'demo-listings', JSON.stringify(listings));
  await service.drainInbox();
  out(`[3/9] Imported ${listings.length} listings through the inbox (the crawl's path into the database).`);

  out("[4/9] Checks of the fleet (with the demo's exempt key, so every answer is the full one):");
  const checked = await Promise.all(
    TOUR.map(async (stop) => {
      const params = { url: world.sellers.urls[stop.name], ...stop.params };
      const response = await fetch(`${url}${CHECK_PATH}?${new URLSearchParams(params)}`, {
        headers: { 'x-service-key': exemptSecret },
      });
      const body = (await response.json()) as Record<string, unknown>;
      if (response.status !== 200) throw new Error(`check of ${stop.name}: HTTP ${response.status}`);
      return { stop, body };
    }),
  );
  for (const { stop, body } of checked) {
    out(
      `      ${stop.name.padEnd(17)} ${String(body.verdict).padEnd(8)}${String(body.reason).padEnd(20)} ${stop.note}`,
    );
    out(`      ${''.padEnd(17)} ${String(body.receipt_url)}`);
  }

  out(
    `[5/9] An agent without a key: ${LIMITS.freeChecksPerDay} free checks a day, then USD 0.02 through x402.`,
  );
  const keyless = await keylessAgent(url);
  const agent = keyless.fetch;
  out(
    keyless.address === null
      ? `      It calls from 127.0.0.1 (this system does not route ${AGENT_ADDRESS}): the URLs below answer 402 until tomorrow.`
      : `      It calls from ${keyless.address}, so the free checks of 127.0.0.1 (yours, for the URLs below) stay unspent.`,
  );
  const target = `${url}${CHECK_PATH}?${new URLSearchParams({ url: world.sellers.urls['sdk-ok'], claimed_price: '0.01' })}`;
  for (let i = 0; i < LIMITS.freeChecksPerDay; i += 1) {
    const free = (await (await agent(target)).json()) as { access?: { free_used_today?: number } };
    out(`      free check ${free.access?.free_used_today ?? '?'}/${LIMITS.freeChecksPerDay}`);
  }
  const refused = await agent(target);
  const required = decodePaymentRequiredHeader(refused.headers.get('PAYMENT-REQUIRED') ?? '');
  const accept = required.accepts[0];
  out(
    `      check ${LIMITS.freeChecksPerDay + 1}: HTTP ${refused.status}, asks ${accept?.amount} atomic USDC on ${accept?.network} to ${accept?.payTo}`,
  );

  const key = state.buyerKeys[0] as `0x${string}`;
  const buyer = privateKeyToAccount(key);
  const before = await balances(world, buyer.address);
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(buyer));
  const paid = await wrapFetchWithPayment(agent, client)(target);
  if (paid.status !== 200) throw new Error(`the paid check answered HTTP ${paid.status}`);
  const answer = v.parse(PaidAnswer, await paid.json());
  const settlement = decodePaymentResponseHeader(paid.headers.get('PAYMENT-RESPONSE') ?? '');
  const tx = answer.access.tx as `0x${string}`;
  const onChain = await world.chain.publicClient.getTransactionReceipt({ hash: tx });
  const after = await balances(world, buyer.address);
  const gas = await world.chain.publicClient.getBalance({ address: buyer.address });
  out(
    `      paid by the official client (@x402/fetch) from ${buyer.address}: HTTP 200, verdict ${answer.verdict}`,
  );
  if (answer.payment) {
    out(
      `      the payment it may now sign: ${answer.payment.amount.atomic} atomic USDC to ${answer.payment.pay_to}`,
    );
  }
  out(`      access: tier ${answer.access.tier}, charged USD ${answer.access.charged_usd}`);
  out(`      tx ${settlement.transaction} (block ${onChain.blockNumber}, ${onChain.status})`);
  out(
    `      service wallet ${usdc(before.service)} → ${usdc(after.service)} USDC (+${usdc(after.service - before.service)})`,
  );
  out(
    `      buyer          ${usdc(before.buyer)} → ${usdc(after.buyer)} USDC, ${gas} wei of ETH: EIP-3009 is gasless`,
  );

  const receiptUrl = `${url}/v1/receipts/${answer.receipt_id}`;
  const receipt = (await (await fetch(receiptUrl)).json()) as Record<string, unknown>;
  const jwks: unknown = await (await fetch(`${url}/.well-known/jwks.json`)).json();
  const verified = await verifyReceipt(receipt, jwks);
  const tampered = await verifyReceipt({ ...receipt, verdict: 'skip' }, jwks);
  if (!verified.ok || tampered.ok) throw new Error('receipt verification did not behave');
  out(
    `[6/9] Receipt ${answer.receipt_id} verified offline with the auditors' verifier (kid ${verified.kid}): ok.`,
  );
  out(`      The same receipt with verdict changed to skip: ${tampered.ok ? 'ok' : tampered.reason}.`);

  out('[7/9] A crawl of the sandbox discovery lists and a bazaar check, taken in by the running service,');
  out('      then the public site built from them:');
  const crawled = await crawlTour(world, config, service, url);
  for (const line of crawled.lines) out(line);
  const site = await buildDemoSite(config, url, new URL(world.sellers.urls['sdk-ok']).host);
  for (const line of site.lines) out(line);
  out('[8/9] Known-answer calls: the service pays the task sellers, judges each answer, ranks them.');
  await tourKnownAnswers({ world, url, dataDir: config.dataDir, buyer: 2, serviceKey: exemptSecret, out });

  out('[9/9] Open:');
  const links: Array<[string, string]> = [
    ['health', `${url}/healthz`],
    ['paid receipt', receiptUrl],
    ['receipts', `${url}/v1/receipts`],
    ['keys (JWKS)', `${url}/.well-known/jwks.json`],
    ['a free check', `${url}${CHECK_PATH}?${new URLSearchParams({ url: world.sellers.urls['sdk-ok'] })}`],
    ['MCP (POST)', `${url}/mcp  ${mcpCall(world.sellers.urls['sdk-ok'])}`],
    ['facilitator', `${state.facilitatorUrl}/supported`],
    ['RPC', state.rpcUrls.join('  ')],
  ];
  links.push(...crawled.links, ...site.links);
  for (const [label, link] of links) out(`      ${label.padEnd(17)} ${link}`);
  out('      sellers:');
  for (const [name, link] of Object.entries(state.sellers)) out(`        ${name.padEnd(22)} ${link}`);
  out(`      buyer key (test only) ${key}`);
  if (values['data-dir']) out(reuseLine(config.dataDir, config.port));
  out('');
}

/** A ready-made MCP call (README "Agents: MCP"): one free check, counted for the caller's own address. */
function mcpCall(sellerUrl: string): string {
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'check_endpoint', arguments: { url: sellerUrl } },
  };
  return `curl -s -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d '${JSON.stringify(call)}'`;
}

/**
 * How to serve a kept DATA_DIR again: its receipts and pages name this run's origin, so `npm start` must listen on
 * the same port (8402, its default, unless the demo had to take another).
 */
function reuseLine(dataDir: string, port: number): string {
  const env = port === 8402 ? '' : ` PORT=${port}`;
  return `      serve this data again: DATA_DIR=${dataDir}${env} npm start  (its receipts and pages link to port ${port})`;
}

/** The service in this process, wired to the world as an operator would wire it (README "Configuration"). */
async function startService(world: World, { server, url }: { server: Server; url: string }) {
  const dataDir = values['data-dir']
    ? resolve(values['data-dir'])
    : await mkdtemp(join(tmpdir(), 'spotcheck-demo-'));
  if (!values['data-dir']) cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const port = Number(new URL(url).port);
  const exemptSecret = randomBytes(16).toString('hex');
  const config = readConfig({
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    FACILITATOR_URL: world.state.facilitatorUrl,
    SERVICE_WALLET: world.state.serviceWallet,
    RPC_URLS: world.state.rpcUrls.join(','),
    PROBE_ALLOW_CIDRS: '127.0.0.0/8',
    EXEMPT_KEYS: `demo:${exemptSecret}`,
  });
  const service = await createService(config);
  cleanups.push(() => service.close());
  // Stop taking requests before the service closes; the early cleanup covers a failure before this line.
  cleanups.push(() => closeServer(server));
  serve(server, service);
  return { service, config, url, exemptSecret };
}

/**
 * 8402 (the service's default) when free, else any free port; `--port` wins. `--once` takes 8402 only with
 * `--data-dir`: data kept for `npm start` then links to the port it will listen on.
 */
async function bindPort(): Promise<{ server: Server; url: string }> {
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isSafeInteger(port) || port < 1 || port > 65535)
      throw new RangeError('--port must be 1 to 65535');
    return bind('127.0.0.1', port);
  }
  if (!values.once || values['data-dir']) {
    const preferred = await bind('127.0.0.1', 8402).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') return undefined;
      throw error;
    });
    if (preferred) return preferred;
  }
  return bind('127.0.0.1', 0);
}

async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
}

/** Closes everything started, in reverse order; `quiet` on a signal, whose stop says it all in one line. */
async function shutdown(code: number, quiet = false): Promise<void> {
  if (stopping) return;
  stopping = true;
  // Reverse order: server, service, data dir, then the world.
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch((error: unknown) => {
      if (!quiet) process.stderr.write(`demo: cleanup failed: ${String(error)}\n`);
    });
  }
  process.exit(code);
}

async function balances(world: World, buyer: `0x${string}`) {
  return {
    service: await world.chain.balanceOf(world.state.serviceWallet as `0x${string}`),
    buyer: await world.chain.balanceOf(buyer),
  };
}

/** Atomic USDC (6 decimals) as exact decimal text. */
function usdc(atomic: bigint): string {
  const sign = atomic < 0n ? '-' : '';
  const abs = atomic < 0n ? -atomic : atomic;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

function ms(started: number): string {
  return `${Math.round(performance.now() - started)} ms`;
}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}
