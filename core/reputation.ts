/**
 * Seller host reputation, 0 to 100 (docs/api.md §2.1 `reputation`), from the service's own evidence only: its unpaid
 * observations of the host's endpoints, its check receipts, and its own paid calls. The formula is published in
 * the rules document through {@link REPUTATION_FORMULA}; reputation is metadata and never changes a verdict.
 */
import type { PaidCallRecord } from './catalog.ts';
import { hasTerms, sameTerms } from './history.ts';
import type { Observation } from './model.ts';

/** An observation of one endpoint of a host; `endpoint` is `METHOD normalized-url`. */
export type HostObservation = Observation & { endpoint: string };

/** The facts of one check receipt that reputation reads. */
export type HostCheck = {
  verdict: string;
  reason: string;
  at: string;
  expected_source: 'request' | 'listing' | null;
};

export type ReputationInput = {
  host: string;
  /** Every endpoint of the host, newest first. */
  observations: readonly HostObservation[];
  checks: readonly HostCheck[];
  paidCalls: readonly PaidCallRecord[];
  now: Date;
};

export type Component = 'availability' | 'stability' | 'honesty' | 'delivery' | 'known_answers';

export type Reputation = {
  host: string;
  score: number | null;
  band: 'high' | 'medium' | 'low' | 'insufficient_data';
  confidence: 'high' | 'medium' | 'low';
  low_data: boolean;
  provisional_score: number | null;
  breakdown: Record<Component, { value: number | null; weight: number; samples: number }>;
  inputs: {
    window_days: number;
    since: string;
    observations: number;
    endpoints: number;
    checks: number;
    checks_counted: number;
    paid_calls: number;
    known_answer_calls: number;
    min_observations: number;
  };
};

const WEIGHTS: Record<Component, number> = {
  availability: 0.25,
  stability: 0.2,
  honesty: 0.25,
  delivery: 0.15,
  known_answers: 0.15,
};
const WINDOW_DAYS = 90;
const MIN_OBSERVATIONS = 5;
const BANDS = { high: 80, medium: 50 } as const;
const DAY_MS = 86_400_000;

/** Reasons where the live terms were read and compared, so they say something about the seller. */
const HONEST = new Set(['price_ok', 'price_below_listing']);
/** Mismatches against the seller's own listing; a caller's expectation can be wrong, so those do not count. */
const LISTING_MISMATCH = new Set(['pay_to_mismatch', 'price_mismatch']);

/** The formula in plain words and weights, for the rules document (docs/api.md §4 `/rules`). */
export const REPUTATION_FORMULA = {
  version: 1,
  summary:
    'Score = 100 × the weighted mean of the components that have data (weights renormalized over them), rounded. ' +
    `Only evidence from the last ${WINDOW_DAYS} days counts. With fewer than ${MIN_OBSERVATIONS} observations of ` +
    'the host the score is null (band insufficient_data) and provisional_score shows the value anyway.',
  window_days: WINDOW_DAYS,
  min_observations: MIN_OBSERVATIONS,
  bands: {
    high: `score >= ${BANDS.high}`,
    medium: `score >= ${BANDS.medium}`,
    low: `score < ${BANDS.medium}`,
  },
  confidence: {
    high: 'at least 20 observations and at least 5 paid calls',
    medium: 'at least 10 observations',
    low: 'otherwise',
  },
  components: [
    {
      name: 'availability',
      weight: WEIGHTS.availability,
      rule: 'share of unpaid probes answered with usable x402 payment terms (not a timeout, 5xx, error or no paywall)',
    },
    {
      name: 'stability',
      weight: WEIGHTS.stability,
      rule: 'per endpoint, share of consecutive observations with terms whose price, network, asset and pay_to did not change',
    },
    {
      name: 'honesty',
      weight: WEIGHTS.honesty,
      rule:
        'share of checks ending price_ok or price_below_listing among those plus asset_not_usdc and pay_to_mismatch or ' +
        "price_mismatch against the seller's own listing (mismatches against a caller's expectation are not counted)",
    },
    {
      name: 'delivery',
      weight: WEIGHTS.delivery,
      rule: "share of the service's own paid calls that were delivered",
    },
    {
      name: 'known_answers',
      weight: WEIGHTS.known_answers,
      rule: "share of the service's own paid calls with a checked answer that passed the task's known answer",
    },
  ],
} as const;

/**
 * The reputation of a host from its evidence.
 * @example reputation({ host: 'api.example', observations, checks, paidCalls, now }).score // 87
 */
export function reputation(input: ReputationInput): Reputation {
  const since = new Date(input.now.getTime() - WINDOW_DAYS * DAY_MS).toISOString();
  const observations = input.observations.filter((item) => item.observed_at >= since);
  const checks = input.checks.filter((item) => item.at >= since);
  const calls = input.paidCalls.filter((item) => item.called_at >= since);

  const usable = observations.filter(hasTerms).length;
  const pairs = stablePairs(observations);
  const counted = checks.filter(
    (check) =>
      HONEST.has(check.reason) ||
      check.reason === 'asset_not_usdc' ||
      (LISTING_MISMATCH.has(check.reason) && check.expected_source === 'listing'),
  );
  const honest = counted.filter((check) => HONEST.has(check.reason)).length;
  const delivered = calls.filter((call) => call.delivered).length;
  const answered = calls.filter((call) => call.known_answer !== null);
  const passes = answered.filter((call) => call.known_answer === 'pass').length;

  const breakdown: Reputation['breakdown'] = {
    availability: part('availability', usable, observations.length),
    stability: part('stability', pairs.stable, pairs.total),
    honesty: part('honesty', honest, counted.length),
    delivery: part('delivery', delivered, calls.length),
    known_answers: part('known_answers', passes, answered.length),
  };
  const provisional = weighted(breakdown);
  const enough = observations.length >= MIN_OBSERVATIONS;
  const score = enough ? provisional : null;
  return {
    host: input.host,
    score,
    band:
      score === null
        ? 'insufficient_data'
        : score >= BANDS.high
          ? 'high'
          : score >= BANDS.medium
            ? 'medium'
            : 'low',
    confidence:
      observations.length >= 20 && calls.length >= 5 ? 'high' : observations.length >= 10 ? 'medium' : 'low',
    low_data: score === null,
    provisional_score: provisional,
    breakdown,
    inputs: {
      window_days: WINDOW_DAYS,
      since,
      observations: observations.length,
      endpoints: new Set(observations.map((item) => item.endpoint)).size,
      checks: checks.length,
      checks_counted: counted.length,
      paid_calls: calls.length,
      known_answer_calls: answered.length,
      min_observations: MIN_OBSERVATIONS,
    },
  };
}

/** Consecutive observations of one endpoint, both with terms: how many pairs, how many kept the same terms. */
function stablePairs(observations: readonly HostObservation[]): { stable: number; total: number } {
  const byEndpoint = new Map<string, HostObservation[]>();
  for (const item of observations) {
    // Observations without terms neither break nor start a run (docs/api.md §2.1 `history`).
    if (!hasTerms(item)) continue;
    const list = byEndpoint.get(item.endpoint) ?? [];
    list.push(item);
    byEndpoint.set(item.endpoint, list);
  }
  let stable = 0;
  let total = 0;
  for (const list of byEndpoint.values()) {
    list.sort((a, b) => (a.observed_at < b.observed_at ? 1 : a.observed_at > b.observed_at ? -1 : 0));
    for (let i = 1; i < list.length; i++) {
      total += 1;
      if (sameTerms(list[i - 1]!, list[i]!)) stable += 1;
    }
  }
  return { stable, total };
}

function part(name: Component, good: number, samples: number) {
  return {
    value: samples === 0 ? null : Math.round((good / samples) * 10_000) / 10_000,
    weight: WEIGHTS[name],
    samples,
  };
}

function weighted(breakdown: Reputation['breakdown']): number | null {
  let sum = 0;
  let weights = 0;
  for (const item of Object.values(breakdown)) {
    if (item.value === null) continue;
    sum += item.value * item.weight;
    weights += item.weight;
  }
  return weights === 0 ? null : Math.round((sum / weights) * 100);
}
