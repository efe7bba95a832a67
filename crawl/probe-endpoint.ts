/**
 * One endpoint of a crawl, start to signed receipt (docs/api.md §2.10 "method"): one unpaid probe through the SSRF-gated
 * prober, GET or POST as listed; the listing's example query only when the bare URL answered 4xx; the check
 * assembled by the same engine as the live check (`core/check-answer.ts`) against the listing (`crawl/assembly.ts`);
 * signed here, where the key is.
 */
import type { CrawlFacts } from '../core/crawl-facts.ts';
import type { PlannedEndpoint } from '../core/crawl-plan.ts';
import type { ProbeOutcome } from '../core/model.ts';
import { newReceiptId, type Signer, signCanonical } from '../core/receipt.ts';
import { retryAfterMs } from '../core/retry-after.ts';
import type { Prober } from '../io/probe/prober.ts';
import { type Assemble, assembleInline } from './assembly.ts';

/** What probing one endpoint needs. */
export type EndpointDeps = {
  prober: Prober;
  signer: Signer;
  now: () => Date;
  random: (n: number) => Uint8Array;
  baseUrl: string;
  runId: string;
  origin: 'crawl' | 'bazaar';
  /** Where the check is assembled and canonicalized (default: inline; `npm run crawl`: its assembly thread). */
  assemble?: Assemble;
};

/**
 * The result of one endpoint: the signed receipt, its JSON text (serialized once, when signed: the journal line and
 * the receipt file carry this text) and the facts the data files are built from.
 */
export type ProbedEndpoint = {
  facts: CrawlFacts;
  receipt: Record<string, unknown> & { id: string };
  json: string;
};

/**
 * What a run lets one endpoint do beyond its first request: `another` before the example request (false: the
 * host's daily budget is spent, and it is not sent), and `retry` for a `429`/`503` with `Retry-After` (true: the
 * URL was put back on its host's queue to be asked again after that pause, and nothing is recorded now).
 */
export type EndpointHooks = { another?: () => boolean; retry?: (ms: number) => boolean };

/**
 * Probes one endpoint and signs its receipt. Never throws for anything the target does. `released` is called once
 * the last request to the host is answered, before the check is assembled and signed (the scheduler's host slot).
 * @example const { facts, receipt } = await probeEndpoint(deps, endpoint)
 */
export async function probeEndpoint(
  deps: EndpointDeps,
  endpoint: PlannedEndpoint,
  released: () => void = () => {},
): Promise<ProbedEndpoint> {
  // Without a retry hook nothing is put off: there is always a record.
  return (await probeOrPutOff(deps, endpoint, released, {})) as ProbedEndpoint;
}

/**
 * {@link probeEndpoint} within a run's {@link EndpointHooks}: null only when `hooks.retry` took a `Retry-After`, and
 * the endpoint is asked again later.
 */
export async function probeOrPutOff(
  deps: EndpointDeps,
  endpoint: PlannedEndpoint,
  released: () => void,
  hooks: EndpointHooks,
): Promise<ProbedEndpoint | null> {
  let url = endpoint.url;
  let outcome = await deps.prober.probe(url, endpoint.method);
  const example = exampleRequest(endpoint);
  const used = example !== null && answeredClientError(outcome) && (hooks.another?.() ?? true);
  if (used) {
    url = example.url;
    outcome = await deps.prober.probe(
      url,
      endpoint.method,
      example.body === null ? {} : { body: example.body },
    );
  }
  // Asked to come back later: the host is paused before its slot frees (the retry hook does both).
  const wait = hooks.retry ? retryAfterMs(outcome, deps.now()) : null;
  if (wait !== null && hooks.retry?.(wait)) return null;
  released();
  const { withKid, text, facts } = await (deps.assemble ?? assembleInline)({
    outcome,
    url,
    example: used ? example.context : null,
    endpoint,
    now: deps.now().getTime(),
    id: newReceiptId('sc-', deps.random),
    baseUrl: deps.baseUrl,
    runId: deps.runId,
    origin: deps.origin,
    kid: deps.signer.kid,
  });
  const { receipt, json } = signCanonical(withKid, text, deps.signer);
  return { facts, receipt, json };
}

/** A 4xx other than 402: the seller may validate its input before its paywall (docs/x402.md §9.7). */
function answeredClientError(outcome: ProbeOutcome): boolean {
  if (outcome.kind !== 'response') return false;
  const status = outcome.response.status;
  return status >= 400 && status < 500 && status !== 402;
}

/** Example bodies larger than this are not sent (a listing is hostile; a real example is a few hundred bytes). */
export const MAX_EXAMPLE_BODY_BYTES = 16_384;

/**
 * The request a listing's example parameters make (docs/api.md §2.10): its example query on the URL (GET or POST), and for
 * a POST its example JSON body. Null when the listing gives nothing usable for the endpoint's method.
 */
export function exampleRequest(
  endpoint: PlannedEndpoint,
): { url: string; body: string | null; context: Record<string, unknown> } | null {
  const query = endpoint.example?.query ?? null;
  const given = endpoint.method === 'POST' ? (endpoint.example?.body ?? null) : null;
  const body = given === null ? null : JSON.stringify(given);
  const sendBody = body !== null && Buffer.byteLength(body) <= MAX_EXAMPLE_BODY_BYTES;
  if (query === null && !sendBody) return null;
  return {
    url: query === null ? endpoint.url : withQuery(endpoint.url, query),
    body: sendBody ? body : null,
    context: {
      ...(query === null ? {} : { example_query: query }),
      ...(sendBody ? { example_body: given } : {}),
    },
  };
}

/** The URL with the example query parameters set (existing ones of the same name replaced). */
function withQuery(url: string, query: Record<string, string>): string {
  const out = new URL(url);
  for (const [key, value] of Object.entries(query)) out.searchParams.set(key, value);
  return out.href;
}
