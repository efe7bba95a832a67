/**
 * The catalog lookup (docs/api.md §1.4, §2.8): the service's own paid calls to catalogued services, and their ranking by
 * known-answer pass rate over each service's last n calls, then by price. Every tier ranks the same records with
 * this same function (docs/api.md §1, pricing principle). The entry shape is documented in `docs/lookup.md`.
 */
import * as v from 'valibot';
import { atomicToUsd, isAtomic, parseUsd } from './amount.ts';
import { canonicalUsdc } from './networks.ts';
import { normalizeUrl } from './url.ts';

/**
 * One of the service's own paid calls to a catalogued service: the receipt-level facts a lookup shows.
 * `endpoint_url` is normalized (docs/api.md §2.10); `price_atomic` is in the atomic units of `network`'s USDC.
 */
export type PaidCallRecord = {
  service_id: string;
  endpoint_url: string;
  task: string;
  called_at: string;
  price_atomic: string;
  network: string;
  pay_to: string;
  /** Settlement transaction of the payment; null when the payment never settled. */
  settlement_tx: string | null;
  /** The seller answered with the paid content (2xx with a body). */
  delivered: boolean;
  /** Outcome of the task's known-answer check; null when the answer could not be checked. */
  known_answer: 'pass' | 'fail' | null;
  /** Status of the paid request; null when no answer came (timeout, reset). */
  http_status: number | null;
  /** The failure was the seller's (no delivery, 5xx, no answer), not ours (facilitator down, our timeout). */
  broken_on_seller_side: boolean;
  /** The signed receipt of the call (`/v1/receipts/{id}`); null for records made without one (tests, imports). */
  receipt_id: string | null;
  /** Why the call did not pass (`core/known-answer.ts` codes, or the paying side's); null on a pass. */
  why: string | null;
};

/** One service in a lookup answer (docs/api.md §2.8 leaves the shape open; `docs/lookup.md` publishes it). */
export type CatalogEntry = {
  service_id: string;
  /** Endpoint URL of the newest call. */
  endpoint: string;
  task: string;
  /** Terms of the newest call: what the service charges now. */
  network: string;
  pay_to: string;
  price_atomic: string;
  /** Display only; null when the network's USDC decimals are unknown. */
  price_usd: number | null;
  /** Paid calls considered: the service's last n. */
  calls: number;
  delivered: number;
  delivered_rate: number;
  /** Calls whose answer could be checked against the task's known answer. */
  known_answer_calls: number;
  known_answer_passes: number;
  /** `known_answer_passes / known_answer_calls`, rounded to 4 places; null without a checked answer. */
  pass_rate: number | null;
  seller_side_failures: number;
  last_called_at: string;
  last_settlement_tx: string | null;
  /** The calls themselves, newest first: the facts behind the figures. */
  receipts: Array<
    Pick<
      PaidCallRecord,
      'receipt_id' | 'called_at' | 'settlement_tx' | 'delivered' | 'known_answer' | 'why' | 'http_status'
    >
  >;
};

export type RankOptions = {
  /** Only calls made for this task; null for every task. */
  task: string | null;
  /** Canonical USD decimal (`parseUsd`); services whose current price is above it are left out. */
  maxPriceUsd: string | null;
  /** Paid calls per service (docs/api.md §8: 1 to 20). */
  n: number;
  /** Services per list (docs/api.md §8: 1 to 20). */
  limit: number;
};

export type Ranking = { results: CatalogEntry[]; facts_only: CatalogEntry[] };

/**
 * The service id of an endpoint: its normalized URL without the scheme, so `http` and `https` of one endpoint are
 * one service. Throws `TypeError` for a string that is not a URL.
 * @example serviceIdOf('https://API.example/v1/fx?b=1&a=2') // 'api.example/v1/fx?a=2&b=1'
 */
export function serviceIdOf(endpointUrl: string): string {
  return normalizeUrl(endpointUrl).replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
}

/**
 * Builds a paid-call record (tests, and the known-answer crawl): normalizes the URL, derives `service_id`, and by
 * default counts an undelivered, unanswered or 5xx call as broken on the seller's side. Throws `RangeError` on an
 * amount that is not atomic or a time that is not ISO 8601 (a caller bug).
 * @example paidCallRecord({ endpoint_url: 'https://a.example/fx', task: 'fx-rate', called_at: '2026-11-01T00:00:00.000Z',
 *   price_atomic: '10000', network: 'eip155:8453', pay_to: '0x…', settlement_tx: '0x…', delivered: true,
 *   known_answer: 'pass', http_status: 200 })
 */
export function paidCallRecord(
  input: Omit<PaidCallRecord, 'service_id' | 'broken_on_seller_side' | 'receipt_id' | 'why'> & {
    service_id?: string;
    broken_on_seller_side?: boolean;
    receipt_id?: string | null;
    why?: string | null;
  },
): PaidCallRecord {
  if (!isAtomic(input.price_atomic))
    throw new RangeError(`paid call: not an atomic amount: ${input.price_atomic}`);
  if (Number.isNaN(Date.parse(input.called_at)))
    throw new RangeError(`paid call: bad time: ${input.called_at}`);
  const endpoint = normalizeUrl(input.endpoint_url);
  const status = input.http_status;
  return {
    ...input,
    receipt_id: input.receipt_id ?? null,
    why: input.why ?? null,
    called_at: new Date(input.called_at).toISOString(),
    endpoint_url: endpoint,
    service_id: input.service_id ?? serviceIdOf(endpoint),
    broken_on_seller_side:
      input.broken_on_seller_side ?? (!input.delivered || status === null || status >= 500),
  };
}

/** Newest first; ties (same instant) by settlement transaction, so every store and this module agree. */
export function newestFirst(a: PaidCallRecord, b: PaidCallRecord): number {
  if (a.called_at !== b.called_at) return a.called_at < b.called_at ? 1 : -1;
  const ta = a.settlement_tx ?? '';
  const tb = b.settlement_tx ?? '';
  return ta === tb ? 0 : ta < tb ? 1 : -1;
}

/**
 * Ranks services from their paid calls (docs/api.md §1.4): per service, its last `n` calls (for `task` when given);
 * services where more than half of those calls failed on the seller's side go to `facts_only`, sorted by id;
 * the others go to `results`, sorted by known-answer pass rate (highest first, services without a checked answer
 * last), then current price (lowest first), then service id. `maxPriceUsd` filters both lists; `limit` cuts each.
 *
 * The scored and sorted services of one `records` array, task and `n` are kept while that array lives (a store
 * answers the same array again until a paid call is added), so a repeated lookup only filters by price and cuts.
 * @example rankServices(records, { task: 'fx-rate', maxPriceUsd: '0.05', n: 5, limit: 10 }).results[0]?.service_id
 */
export function rankServices(records: readonly PaidCallRecord[], options: RankOptions): Ranking {
  const byOptions = scoredBy.get(records) ?? new Map<string, ScoredServices>();
  scoredBy.set(records, byOptions);
  const key = JSON.stringify([options.task, options.n]);
  let scored = byOptions.get(key);
  if (scored === undefined) {
    scored = scoreServices(records, options.task, options.n);
    byOptions.set(key, scored);
  }
  const maxScaled = options.maxPriceUsd === null ? null : (scaledUsd(options.maxPriceUsd) ?? -1n);
  // Fail closed: a price in unknown units is never within a maximum. Filtering keeps the sorted order.
  const cut = (items: readonly Scored[]) => {
    const shown: CatalogEntry[] = [];
    for (const item of items) {
      if (shown.length >= options.limit) break;
      if (maxScaled !== null && (item.scaledPrice === null || item.scaledPrice > maxScaled)) continue;
      shown.push(entryOf(item.recent, item.newest));
    }
    return shown;
  };
  return { results: cut(scored.results), facts_only: cut(scored.factsOnly) };
}

/** Every service of a ranking, scored and in its list's order, before the price filter and the cut. */
type ScoredServices = { results: Scored[]; factsOnly: Scored[] };

const scoredBy = new WeakMap<readonly PaidCallRecord[], Map<string, ScoredServices>>();

function scoreServices(records: readonly PaidCallRecord[], task: string | null, n: number): ScoredServices {
  const byService = new Map<string, PaidCallRecord[]>();
  for (const record of records) {
    if (task !== null && record.task !== task) continue;
    const list = byService.get(record.service_id);
    if (list === undefined) byService.set(record.service_id, [record]);
    else list.push(record);
  }
  const results: Scored[] = [];
  const factsOnly: Scored[] = [];
  for (const list of byService.values()) {
    // Stores answer each service's calls newest first; sort only when they are not.
    const ordered = list.every((call, i) => i === 0 || newestFirst(list[i - 1] as PaidCallRecord, call) <= 0);
    const recent = (ordered ? list : [...list].sort(newestFirst)).slice(0, n);
    const newest = recent[0];
    if (!newest) continue;
    let checked = 0;
    let passes = 0;
    let broken = 0;
    for (const call of recent) {
      if (call.known_answer !== null) checked++;
      if (call.known_answer === 'pass') passes++;
      if (call.broken_on_seller_side) broken++;
    }
    (broken * 2 > recent.length ? factsOnly : results).push({
      service_id: newest.service_id,
      known_answer_calls: checked,
      known_answer_passes: passes,
      scaledPrice: scaled(newest),
      recent,
      newest,
    });
  }
  results.sort((a, b) => byPassRate(a, b) || byPrice(a.scaledPrice, b.scaledPrice) || byId(a, b));
  factsOnly.sort(byId);
  return { results, factsOnly };
}

type Scored = Pick<CatalogEntry, 'service_id' | 'known_answer_calls' | 'known_answer_passes'> & {
  scaledPrice: bigint | null;
  recent: PaidCallRecord[];
  newest: PaidCallRecord;
};

function entryOf(recent: PaidCallRecord[], newest: PaidCallRecord): CatalogEntry {
  const delivered = recent.filter((call) => call.delivered).length;
  const checked = recent.filter((call) => call.known_answer !== null);
  const passes = checked.filter((call) => call.known_answer === 'pass').length;
  const usdc = canonicalUsdc(newest.network);
  return {
    service_id: newest.service_id,
    endpoint: newest.endpoint_url,
    task: newest.task,
    network: newest.network,
    pay_to: newest.pay_to,
    price_atomic: newest.price_atomic,
    price_usd: usdc && isAtomic(newest.price_atomic) ? atomicToUsd(newest.price_atomic, usdc.decimals) : null,
    calls: recent.length,
    delivered,
    delivered_rate: round(delivered / recent.length),
    known_answer_calls: checked.length,
    known_answer_passes: passes,
    pass_rate: checked.length === 0 ? null : round(passes / checked.length),
    seller_side_failures: recent.filter((call) => call.broken_on_seller_side).length,
    last_called_at: newest.called_at,
    last_settlement_tx: newest.settlement_tx,
    receipts: recent.map(
      ({ receipt_id, called_at, settlement_tx, delivered, known_answer, why, http_status }) => ({
        receipt_id,
        called_at,
        settlement_tx,
        delivered,
        known_answer,
        why,
        http_status,
      }),
    ),
  };
}

/** A USD decimal (canonical, `parseUsd`) on the scale of {@link scaled}; null when it is not one. */
function scaledUsd(usd: string): bigint | null {
  const canonical = parseUsd(usd);
  if (canonical === null) return null;
  const [whole = '0', fraction = ''] = canonical.split('.');
  return fraction.length > 36 ? null : BigInt(whole + fraction.padEnd(36, '0'));
}

/** Price on one scale (10^-36 USD) so prices on networks with different decimals compare exactly. */
function scaled(call: PaidCallRecord): bigint | null {
  const usdc = canonicalUsdc(call.network);
  if (!usdc || !isAtomic(call.price_atomic)) return null;
  return BigInt(call.price_atomic) * scaleOf(usdc.decimals);
}

const SCALES = new Map<number, bigint>();
/** 10^(36 - decimals), computed once per decimals (a lookup ranks thousands of services). */
function scaleOf(decimals: number): bigint {
  let scale = SCALES.get(decimals);
  if (scale === undefined) {
    scale = 10n ** BigInt(36 - decimals);
    SCALES.set(decimals, scale);
  }
  return scale;
}

type PassCounts = Pick<CatalogEntry, 'known_answer_calls' | 'known_answer_passes'>;

/** Exact: compares passes/calls by cross-multiplying, never by rounded floats. */
function byPassRate(a: PassCounts, b: PassCounts): number {
  if (a.known_answer_calls === 0 || b.known_answer_calls === 0) {
    return (a.known_answer_calls === 0 ? 1 : 0) - (b.known_answer_calls === 0 ? 1 : 0);
  }
  return b.known_answer_passes * a.known_answer_calls - a.known_answer_passes * b.known_answer_calls;
}

function byPrice(a: bigint | null, b: bigint | null): number {
  if (a === null || b === null) return (a === null ? 1 : 0) - (b === null ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

function byId(a: { service_id: string }, b: { service_id: string }): number {
  return a.service_id < b.service_id ? -1 : a.service_id > b.service_id ? 1 : 0;
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** A line of a known-answer run's `paid-calls.ndjson`, as the run writes it (`service_id` is derived again). */
const PaidCallLine = v.object({
  endpoint_url: v.string(),
  task: v.string(),
  called_at: v.string(),
  price_atomic: v.string(),
  network: v.string(),
  pay_to: v.string(),
  settlement_tx: v.nullable(v.string()),
  delivered: v.boolean(),
  known_answer: v.nullable(v.picklist(['pass', 'fail'])),
  http_status: v.nullable(v.number()),
  broken_on_seller_side: v.boolean(),
  receipt_id: v.nullable(v.string()),
  why: v.nullable(v.string()),
});

/**
 * The record of one line of a run's `paid-calls.ndjson` (the API's intake and the site read runs alike); null for a
 * line that is not a whole record (a run file is ours, but never trusted blindly).
 * @example paidCallOfLine(JSON.parse(line)) // PaidCallRecord | null
 */
export function paidCallOfLine(line: unknown): PaidCallRecord | null {
  const parsed = v.safeParse(PaidCallLine, line);
  if (!parsed.success) return null;
  try {
    return paidCallRecord(parsed.output);
  } catch {
    return null;
  }
}
