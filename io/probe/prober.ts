/**
 * The prober: one unpaid, SSRF-gated, pinned HTTP exchange with a third-party endpoint (docs/api.md §1 item 1, §2.10
 * "method", docs/api.md §3.1 rules 1-2). It never throws: every failure of the target is a {@link ProbeOutcome}.
 *
 * Protections (CONTRIBUTING.md "SSRF gate"; do not regress):
 * - every hop, redirects included, passes `checkUrl` before DNS, then EVERY resolved address passes
 *   `checkAddress`; one private address among public ones blocks the probe;
 * - the connection goes to an address that was checked (`host: <ip>`, SNI and `Host` from the URL), so a DNS
 *   answer that changes between check and connect (rebinding) has no window;
 * - one budget (`timeoutMs`) covers DNS, connect, redirects, the 405 retry and the body; headers and body are
 *   capped; the socket is destroyed when the exchange ends, except that a prober created with `reuseConnections`
 *   keeps a GET's socket, read to its end, for the next probe of the same approved address within a second;
 * - at most `maxInFlightPerAddress` exchanges are in flight to one checked address and port at once, whatever names
 *   led there (`io/probe/address-slots.ts`); time queued for a slot is not the target's and pauses the budget, and the
 *   queue itself is bounded (`addressQueueMs`).
 */
import dns from 'node:dns';
import type { HttpMethod, ProbeOutcome, ProbeResponse } from '../../core/model.ts';
import { type Cidr, checkAddress, checkUrl } from '../../core/ssrf.ts';
import {
  createTimeBudget,
  type ExchangeContext,
  type ProbeRun,
  REDIRECTS,
  sendToAddresses,
} from './_exchange.ts';
import { type Connect, classifyError, createConnect } from './_http.ts';
import { createAddressSlots, MAX_IN_FLIGHT_PER_ADDRESS } from './address-slots.ts';
import { DEFAULT_USER_AGENT } from './user-agent.ts';

export type { Connect, ConnectTarget } from './_http.ts';

/** One address of a DNS answer. */
export type LookupAddress = { address: string; family: 4 | 6 };

/** Resolves every address of a host name (the injected DNS seam). */
export type Lookup = (host: string) => Promise<LookupAddress[]>;

/** The default budget of one whole probe (docs/api.md §2.10: 5 s); a paid check's handler runs within it. */
export const PROBE_BUDGET_MS = 5000;

/** Options of {@link createProber}; every side effect is a parameter with a default. */
export type ProberOptions = {
  lookup?: Lookup;
  /** Operator exemptions from the gate (`PROBE_ALLOW_CIDRS`); empty by default. */
  allow?: Cidr[];
  /** Budget of the whole probe: DNS, connects, redirects, the 405 retry and the body. docs/api.md §2.10: 5 s. */
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** Node's 16 KB default is too small for x402 (bazaar schemas inflate `PAYMENT-REQUIRED`, docs/x402.md §9.18). */
  maxHeaderBytes?: number;
  maxRedirects?: number;
  now?: () => Date;
  /** The User-Agent (`io/probe/user-agent.ts`: `spotcheckUserAgent(baseUrl)`; default names Spotcheck only). */
  userAgent?: string;
  connect?: Connect;
  /**
   * Keep each GET's connection, once its answer is read to the end, for the next probe of the same address within a
   * second: a crawl probes many URLs of a host, and a router checks many endpoints of a popular seller, each reuse
   * saving a TCP and TLS handshake. The service and the crawl turn it on; off, every probe opens a fresh connection.
   */
  reuseConnections?: boolean;
  /** Idle connections kept over every address (default `MAX_IDLE_CONNECTIONS`, 256); a crawl keeps more. */
  maxIdleConnections?: number;
  /** Most exchanges in flight to one address and port (default {@link MAX_IN_FLIGHT_PER_ADDRESS}, 32). */
  maxInFlightPerAddress?: number;
  /**
   * Longest a probe waits for a slot of its address before it ends as `timeout` / `timeout_queue` (default: the
   * budget, so a live check waits at most twice its budget). The crawl waits as long as it takes: every slot is
   * freed within a budget, and a false timeout would be published against a server that was never asked.
   */
  addressQueueMs?: number;
};

/** What a probe sends besides its URL and method. */
export type ProbeSend = {
  /** The JSON body of a POST (default `{}`, docs/api.md §4); a crawl sends a listing's example body (docs/api.md §2.10). */
  body?: string;
};

/** A configured prober. */
export type Prober = { probe(url: string, method: HttpMethod, send?: ProbeSend): Promise<ProbeOutcome> };

/** The system resolver: every address, in the resolver's order. */
export const systemLookup: Lookup = async (host) => {
  const found = await dns.promises.lookup(host, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * Creates a prober.
 *
 * Decisions: more than `maxRedirects` redirects is `unreachable` / `too_many_redirects` (the endpoint cannot be
 * reached within policy; nothing was refused). A GET answered 405 is retried once as POST from the listed URL
 * within the same budget; a 402 to the retry is the answer (`methodUsed: 'POST'`), anything else the retry meets
 * leaves the GET's 405 as the answer (`methodUsed: 'GET'`). Redirects follow fetch semantics: 303, and 301/302
 * after a POST, continue as GET. An unparseable URL is `blocked` / `invalid_url` (nothing was contacted). A body cut
 * short by the peer after the headers is still a `response`, with `bodyTruncated: true` as for the size cap.
 *
 * @example
 * const prober = createProber({ allow: parseCidrList(process.env.PROBE_ALLOW_CIDRS ?? '') });
 * const outcome = await prober.probe('https://seller.example/api', 'GET');
 */
export function createProber(options: ProberOptions = {}): Prober {
  const timeoutMs = options.timeoutMs ?? PROBE_BUDGET_MS;
  const ctx: ProberContext = {
    lookup: options.lookup ?? systemLookup,
    allow: options.allow ?? [],
    timeoutMs,
    maxBodyBytes: options.maxBodyBytes ?? 256 * 1024,
    maxHeaderSize: options.maxHeaderBytes ?? 256 * 1024,
    maxRedirects: options.maxRedirects ?? 3,
    now: options.now ?? (() => new Date()),
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    connect: options.connect ?? createConnect({}, options.maxIdleConnections),
    reuseConnections: options.reuseConnections ?? false,
    slots: createAddressSlots(options.maxInFlightPerAddress ?? MAX_IN_FLIGHT_PER_ADDRESS),
    addressQueueMs: options.addressQueueMs ?? timeoutMs,
    budgets: new WeakMap(),
  };
  return { probe: (url, method, send) => probeWith(ctx, url, method, send) };
}

/** A prober's options, resolved: what every probe it runs shares. */
type ProberContext = ExchangeContext & {
  readonly lookup: Lookup;
  readonly allow: Cidr[];
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  readonly now: () => Date;
};

type Hop = Omit<ProbeResponse, 'methodUsed'>;
type Step = { kind: 'response'; hop: Hop } | { kind: 'blocked' | 'unreachable'; detail: string };

/** One probe of `url`: the chain as listed, then the POST retry of a GET answered 405. */
async function probeWith(
  ctx: ProberContext,
  url: string,
  method: HttpMethod,
  request: ProbeSend = {},
): Promise<ProbeOutcome> {
  const probedAt = ctx.now().toISOString();
  const t0 = performance.now();
  const stamp = () => ({ probedAt, elapsedMs: Math.round(performance.now() - t0) });
  if (typeof url !== 'string' || !URL.canParse(url))
    return { kind: 'blocked', detail: 'invalid_url', ...stamp() };
  const start = new URL(url);
  const budget = createTimeBudget(ctx.timeoutMs);
  ctx.budgets.set(budget.signal, budget);
  const run: ProbeRun = { signal: budget.signal, stage: { name: 'dns' }, postBody: request.body ?? '{}' };
  try {
    const step = await followChain(ctx, run, start, method);
    if (step.kind !== 'response') return { kind: step.kind, detail: step.detail, ...stamp() };
    if (step.hop.status === 405 && method === 'GET') {
      // A route bound to POST may answer 405 to a GET: the listing's method may be wrong (docs/x402.md
      // 9.6). The retry counts only when it finds the paywall: anything else it meets (another status, a
      // failure, the budget running out) leaves the listed GET's 405 as the answer, so `methodUsed` names
      // POST only for a 402 that came from the POST (docs/decisions.md "The probe").
      const retry = await retryAsPost(ctx, run, start);
      if (retry !== null) return { kind: 'response', response: { ...retry, methodUsed: 'POST' }, ...stamp() };
    }
    return { kind: 'response', response: { ...step.hop, methodUsed: method }, ...stamp() };
  } catch (err) {
    if (budget.signal.aborted) return { kind: 'timeout', detail: `timeout_${run.stage.name}`, ...stamp() };
    return { kind: 'unreachable', detail: classifyError(err), ...stamp() };
  } finally {
    budget.clear();
  }
}

/** Follows one redirect chain from `start`, gating every hop. */
async function followChain(ctx: ProberContext, run: ProbeRun, start: URL, method: HttpMethod): Promise<Step> {
  let current = start;
  let m = method;
  for (let redirects = 0; ; redirects++) {
    const gated = await gateHop(ctx, run, current);
    if (!Array.isArray(gated)) return gated;
    const res = await sendToAddresses(ctx, run, current, m, gated);
    const location = res.headers['location'];
    if (REDIRECTS.has(res.status) && location !== undefined) {
      if (redirects >= ctx.maxRedirects) return { kind: 'unreachable', detail: 'too_many_redirects' };
      const next = URL.canParse(location, current) ? new URL(location, current) : null;
      if (next === null) return { kind: 'unreachable', detail: 'bad_redirect_location' };
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && m === 'POST')) m = 'GET';
      current = next;
      continue;
    }
    const text = res.body.length === 0 ? null : res.body.toString('utf8');
    return {
      kind: 'response',
      hop: {
        status: res.status,
        headers: res.headers,
        body: text,
        bodyTruncated: res.truncated,
        finalUrl: current.href,
        redirects,
      },
    };
  }
}

/**
 * The gate of one hop: `checkUrl` before DNS, then every resolved address through `checkAddress`. The addresses
 * to connect to, or the step that ends the chain (one refused address among public ones blocks the probe).
 */
async function gateHop(
  ctx: ProberContext,
  run: ProbeRun,
  url: URL,
): Promise<string[] | Exclude<Step, { kind: 'response' }>> {
  const gate = checkUrl(url, ctx.allow);
  if (!gate.ok) return { kind: 'blocked', detail: gate.reason };
  if (gate.address !== null) return [gate.address];
  run.stage.name = 'dns';
  const found = await abortable(ctx.lookup(url.hostname), run.signal);
  if (!Array.isArray(found) || found.length === 0) return { kind: 'unreachable', detail: 'dns_no_address' };
  const addresses: string[] = [];
  for (const entry of found) {
    // The resolver is injected: its answer is checked as untrusted data too (fail closed).
    const address: unknown = entry?.address;
    if (typeof address !== 'string') return { kind: 'blocked', detail: 'unparseable_address' };
    const checked = checkAddress(address, ctx.allow);
    if (!checked.ok) return { kind: 'blocked', detail: `${checked.reason}:${address}` };
    addresses.push(address);
  }
  return addresses;
}

/** The POST retry of a GET answered 405: its answer when it is a 402, else null (never throws). */
async function retryAsPost(ctx: ProberContext, run: ProbeRun, start: URL): Promise<Hop | null> {
  try {
    const step = await followChain(ctx, run, start, 'POST');
    return step.kind === 'response' && step.hop.status === 402 ? step.hop : null;
  } catch {
    return null;
  }
}

/** Races a promise that cannot be cancelled (DNS) against the budget; a late result or error is dropped. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
