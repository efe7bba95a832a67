/**
 * One endpoint of a crawl, start to signed receipt (spec §2.10 "method"): one unpaid probe through the SSRF-gated
 * prober, GET or POST as listed; the listing's example query only when the bare URL answered 4xx; the check
 * assembled by the same engine as the live check (`core/check-answer.ts`) against the listing; signed.
 */
import { assembleCheck } from '../core/check-answer.ts';
import { type CrawlFacts, crawlContext, crawlFactsOf } from '../core/crawl-facts.ts';
import type { PlannedEndpoint } from '../core/crawl-plan.ts';
import type { ProbeOutcome } from '../core/model.ts';
import { newReceiptId, type Signer, signReceipt } from '../core/receipt.ts';
import type { Prober } from '../io/prober.ts';

/** What probing one endpoint needs. */
export type EndpointDeps = {
  prober: Prober;
  signer: Signer;
  now: () => Date;
  random: (n: number) => Uint8Array;
  baseUrl: string;
  runId: string;
  origin: 'crawl' | 'bazaar';
};

/** The result of one endpoint: the signed receipt and the facts the data files are built from. */
export type EndpointRecord = { facts: CrawlFacts; receipt: Record<string, unknown> & { id: string } };

/**
 * Probes one endpoint and signs its receipt. Never throws for anything the target does.
 * @example const { facts, receipt } = await probeEndpoint(deps, endpoint)
 */
export async function probeEndpoint(deps: EndpointDeps, endpoint: PlannedEndpoint): Promise<EndpointRecord> {
  let url = endpoint.url;
  let outcome = await deps.prober.probe(url, endpoint.method);
  const query = endpoint.example?.query ?? null;
  if (query !== null && answeredClientError(outcome)) {
    url = withQuery(endpoint.url, query);
    outcome = await deps.prober.probe(url, endpoint.method);
  }
  const now = deps.now();
  const check = assembleCheck({
    outcome,
    cached: false,
    cacheTtlS: 0,
    request: {
      url,
      method: endpoint.method,
      claimedPrice: null,
      payTo: null,
      network: null,
      checkExpiry: false,
      skewS: 30,
    },
    mode: 'live',
    checkType: 'dry-run',
    listing: endpoint.listing,
    previous: [],
    now,
    id: newReceiptId('sc-', deps.random),
    baseUrl: deps.baseUrl,
    context: {
      ...crawlContext(deps.runId, deps.origin, endpoint),
      ...(url === endpoint.url ? {} : { example_query: query }),
    },
  });
  const receipt = signReceipt(check.unsigned, deps.signer);
  return { facts: crawlFactsOf(check, endpoint), receipt };
}

/** A 4xx other than 402: the seller may validate its input before its paywall (x402-notes §9.7). */
function answeredClientError(outcome: ProbeOutcome): boolean {
  if (outcome.kind !== 'response') return false;
  const status = outcome.response.status;
  return status >= 400 && status < 500 && status !== 402;
}

/** The URL with the example query parameters set (existing ones of the same name replaced). */
function withQuery(url: string, query: Record<string, string>): string {
  const out = new URL(url);
  for (const [key, value] of Object.entries(query)) out.searchParams.set(key, value);
  return out.href;
}
