/**
 * Alternatives on a skip (docs/api.md §2.1 `alternatives`, docs/lookup.md "Ranking"): when a check names a `task` and
 * ends in `skip`, up to three other services of that task, ranked by the lookup's own function (`rankServices`) over
 * the same paid calls, kept within the caller's `claimed_price`, each with the URL of its newest paid call's
 * receipt. The live check and the endpoint pages of the site both list them from here. They are the catalog's view
 * at answer time, not what the probe saw, so they stay out of the signed receipt (docs/decisions.md "Alternatives
 * on a skip").
 */
import { type PaidCallRecord, rankServices, serviceIdOf } from './catalog.ts';
import { LOOKUP_DEFAULTS } from './lookup-params.ts';
import { receiptUrlOf } from './receipt.ts';

/** At most this many alternatives are listed. */
export const MAX_ALTERNATIVES = 3;

/** One alternative: a ranked service of the task (a `results` entry of the lookup, shortened). */
export type Alternative = {
  service_id: string;
  /** Endpoint URL of the service's newest paid call. */
  endpoint: string;
  network: string;
  price_atomic: string;
  /** Null when the network's USDC decimals are unknown. */
  price_usd: number | null;
  /** Known-answer passes over checked answers of its last calls, as the lookup shows it; null with none checked. */
  pass_rate: number | null;
  /** `/v1/receipts/{id}` of the service's newest paid call; null when that call has no receipt. */
  receipt_url: string | null;
};

/** What the alternatives of one check are drawn from. */
export type AlternativesQuery = {
  task: string;
  /** The caller's ceiling, a USD decimal (`claimed_price`); null for none. */
  maxPriceUsd: string | null;
  /** The URL that was checked: its own service is never its alternative. */
  checkedUrl: string;
  /** Public origin for the receipt URLs, without a trailing slash. */
  baseUrl: string;
};

/** The rules document's words on alternatives (`/rules.json` `alternatives`). */
export const ALTERNATIVES_RULES: readonly string[] = [
  `A check that names a task and ends in skip adds alternatives: up to ${MAX_ALTERNATIVES} other services of that task, in the order GET /v1/lookup ranks them (known-answer pass rate over each service's last ${LOOKUP_DEFAULTS.n} paid calls, then current price, then service id), services broken on the seller's side left out.`,
  "Only services whose current price is at most the caller's claimed_price are listed; without claimed_price every ranked service may be.",
  'Each names the receipt of its newest paid call (receipt_url). A check without task, or that does not end in skip, has no alternatives member; alternatives is null when the catalog could not be read, and the verdict never depends on it.',
  'Alternatives are part of the answer only, never of the signed receipt; free, paid, exempt and hosted callers get the same list.',
];

/**
 * The alternatives of a skipped check, best first: the lookup's ranking of `records` for `task` (default `n`),
 * within `maxPriceUsd`, without the checked URL's own service, cut to {@link MAX_ALTERNATIVES}.
 * @example alternativesOf(records, { task: 'fx-rate', maxPriceUsd: '0.01', checkedUrl: 'https://a.example/fx', baseUrl })
 */
export function alternativesOf(records: readonly PaidCallRecord[], query: AlternativesQuery): Alternative[] {
  const own = ownServiceId(query.checkedUrl);
  const ranked = rankServices(records, {
    task: query.task,
    maxPriceUsd: query.maxPriceUsd,
    n: LOOKUP_DEFAULTS.n,
    // One more than shown, so leaving out the checked service still fills the list.
    limit: MAX_ALTERNATIVES + 1,
  }).results;
  const out: Alternative[] = [];
  for (const entry of ranked) {
    if (entry.service_id === own) continue;
    if (out.length === MAX_ALTERNATIVES) break;
    const receiptId = entry.receipts[0]?.receipt_id ?? null;
    out.push({
      service_id: entry.service_id,
      endpoint: entry.endpoint,
      network: entry.network,
      price_atomic: entry.price_atomic,
      price_usd: entry.price_usd,
      pass_rate: entry.pass_rate,
      receipt_url: receiptId === null ? null : receiptUrlOf(query.baseUrl, receiptId),
    });
  }
  return out;
}

function ownServiceId(url: string): string | null {
  try {
    return serviceIdOf(url);
  } catch {
    return null;
  }
}
