/**
 * The facts of one crawl probe that the published files are built from (docs/data-files.md): one line of a run's
 * `receipts.ndjson`, taken from the assembled check and the endpoint's listing when the probe is made.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { CheckAssembly } from './check-answer.ts';
import type { PlannedEndpoint } from './crawl-plan.ts';
import type { DisputeField } from './listing-dispute.ts';
import type { HttpMethod, Observation } from './model.ts';
import { isProbeState, type ProbeState } from './probe-state.ts';
import type { Reason, Verdict } from './reasons.ts';

/** One probe of a run, as the index and the data files need it. */
export type CrawlFacts = {
  id: string;
  /** 12 hex digits: the first 6 bytes of SHA-256 of the receipt id (the skip record `id`). */
  short_id: string;
  url: string;
  url_norm: string;
  host: string;
  method: HttpMethod;
  issued_at: string;
  probed_at: string;
  verdict: Verdict;
  reason: Reason;
  http_status: number | null;
  /** Only when the probe ended before a 402: why (`core/probe-state.ts`). */
  probe_state?: ProbeState;
  quoted_price_usd: number | null;
  pay_to: string | null;
  network: string | null;
  listed_price_usd: number | null;
  listed_pay_to: string | null;
  listed_network: string | null;
  /** Where the expectation came from: `listing` when the listing named a wallet or network. */
  expected_source: 'request' | 'listing' | null;
  /** Present only when the endpoint's listings disagree (`core/listing-dispute.ts`): the terms in dispute. */
  disputed?: DisputeField[];
  source_list: string;
  also_listed_in: string[];
  receipt_url: string;
  /** The probe's observation of the live terms, for the endpoint's history once the server takes the run in
   *  (null for a reused probe, which a crawl never makes, and on a carried line). */
  observation: Observation | null;
  /**
   * Only on a line carried from an earlier run because the sources listing it failed in this one
   * (`crawl/carried.ts`): the run that probed it. Absent on the run's own probes.
   */
  carried_from?: string;
};

/**
 * The short hexadecimal id of a receipt (docs/api.md §2.6: "short hexadecimal ids also appear in the skip listing").
 * @example shortId('sc-aaaaaaaaaaaaaaaaaaaaaaaaaa') // 12 hex digits
 */
export function shortId(receiptId: string): string {
  return bytesToHex(sha256(utf8ToBytes(receiptId)).slice(0, 6));
}

/** The facts of a probe from its assembled check and endpoint. */
export function crawlFactsOf(check: CheckAssembly, endpoint: PlannedEndpoint): CrawlFacts {
  const { decision, unsigned, full } = check;
  const probe = full['probe'] as { probed_at: string };
  return {
    id: unsigned.id,
    short_id: shortId(unsigned.id),
    url: endpoint.url,
    url_norm: endpoint.urlNorm,
    host: endpoint.host,
    method: endpoint.method,
    issued_at: unsigned.issued_at,
    probed_at: probe.probed_at,
    verdict: decision.verdict,
    reason: decision.reason,
    http_status: typeof unsigned['http_status'] === 'number' ? unsigned['http_status'] : null,
    ...(isProbeState(full.quality?.['probe_state']) ? { probe_state: full.quality['probe_state'] } : {}),
    quoted_price_usd: full['quoted_price_usd'] as number | null,
    pay_to: decision.option?.payTo ?? null,
    network: decision.option?.network ?? null,
    listed_price_usd: endpoint.listing.priceUsd,
    listed_pay_to: endpoint.listing.payTo,
    listed_network: endpoint.listing.network,
    expected_source: decision.expectedSource,
    ...(endpoint.dispute ? { disputed: endpoint.dispute.fields } : {}),
    source_list: endpoint.sourceList,
    also_listed_in: endpoint.alsoListedIn,
    receipt_url: full['receipt_url'] as string,
    observation: check.observation,
  };
}

/**
 * The receipt members a crawl adds to a check receipt: what ran it and the listing it was held to; for a disputed
 * endpoint, no terms and the terms in dispute (`disputed`).
 */
export function crawlContext(runId: string, origin: 'crawl' | 'bazaar', endpoint: PlannedEndpoint) {
  const l = endpoint.listing;
  return {
    origin,
    run_id: runId,
    listing: {
      source: endpoint.sourceList,
      also_listed_in: endpoint.alsoListedIn,
      price_usd: l.priceUsd,
      pay_to: l.payTo,
      network: l.network,
      asset: l.asset,
      ...(endpoint.dispute ? { disputed: endpoint.dispute.fields } : {}),
    },
  };
}

/** The listed and the live terms of a probe side by side, as the saves list and the bazaar check show them. */
export function termsSideBySide(f: CrawlFacts) {
  return {
    listed_price_usd: f.listed_price_usd,
    quoted_price_usd: f.quoted_price_usd,
    listed_pay_to: f.listed_pay_to,
    pay_to: f.pay_to,
    listed_network: f.listed_network,
    network: f.network,
  };
}
