/**
 * Observations of an endpoint's live terms and their summary (docs/api.md §2.1 `history_observations`, `history`,
 * `pay_to_changed`).
 */

import { LIMITS } from './limits.ts';
import type { Decision, HistorySummary, Observation, ProbeOutcome } from './model.ts';
import { optionPriceUsd } from './payment.ts';

const DAY_MS = 86_400_000;

/**
 * One observation from a probe and its decision. The terms are those of `decision.option` when the
 * challenge decoded; otherwise (timeouts, errors, no paywall) they are null. `price_usd` is null unless the
 * asset is the network's canonical USDC ({@link optionPriceUsd}).
 * @example observationOf(outcome, decision).amount_atomic // '10000'
 */
export function observationOf(outcome: ProbeOutcome, decision: Decision): Observation {
  const option = decision.challenge === null ? null : decision.option;
  return {
    observed_at: outcome.probedAt,
    http_status: outcome.kind === 'response' ? outcome.response.status : null,
    price_usd: option === null ? null : optionPriceUsd(option),
    amount_atomic: option?.amount ?? null,
    network: option?.network ?? null,
    asset: option?.asset ?? null,
    pay_to: option?.payTo ?? null,
  };
}

/** True when an observation carries payment terms; one without terms neither breaks nor starts a run. */
export function hasTerms(observation: Observation): boolean {
  return (
    observation.amount_atomic !== null ||
    observation.network !== null ||
    observation.asset !== null ||
    observation.pay_to !== null
  );
}

/** Same payment terms: amount, network, asset and pay_to (`0x` values compared case-insensitively). */
export function sameTerms(a: Observation, b: Observation): boolean {
  return (
    a.amount_atomic === b.amount_atomic &&
    a.network === b.network &&
    sameValue(a.asset, b.asset) &&
    sameValue(a.pay_to, b.pay_to)
  );
}

/**
 * Summary of at most the newest `LIMITS.historyKept` observations (given newest first):
 * `stable_since` is when the newest unbroken run of identical terms was first seen, `stable_for_days` the
 * whole days from then to `now`, `last_changed` the same instant when older kept observations had other
 * terms (null if the terms never changed), `drift` whether the newest terms differ from the previous
 * observation with terms (null if there is none). Observations without terms are skipped.
 * @example summarizeHistory([], now) // { observations: 0, stable_for_days: null, ... }
 */
export function summarizeHistory(newestFirst: Observation[], now: Date): HistorySummary {
  const kept = newestFirst.slice(0, LIMITS.historyKept);
  const withTerms = kept.filter(hasTerms);
  const current = withTerms[0];
  if (current === undefined) {
    return {
      observations: kept.length,
      stable_for_days: null,
      stable_since: null,
      last_changed: null,
      drift: null,
    };
  }
  let run = 1;
  while (run < withTerms.length && sameTerms(withTerms[run]!, current)) run += 1;
  const stableSince = withTerms[run - 1]!.observed_at;
  const previous = withTerms[1];
  return {
    observations: kept.length,
    stable_for_days: wholeDays(stableSince, now),
    stable_since: stableSince,
    last_changed: run < withTerms.length ? stableSince : null,
    drift: previous === undefined ? null : !sameTerms(current, previous),
  };
}

/**
 * docs/api.md §2.1 `pay_to_changed`: true when `current` asks a different wallet than the newest previous
 * observation with terms on the same network, false when the same, null when there is nothing to compare
 * (no wallet now, or no earlier observation on that network). A flag only: it never changes the verdict.
 * @example payToChanged(previousNewestFirst, observationOf(outcome, decision))
 */
export function payToChanged(previousNewestFirst: Observation[], current: Observation): boolean | null {
  if (current.pay_to === null || current.network === null) return null;
  const previous = previousNewestFirst.find((o) => o.pay_to !== null && o.network === current.network);
  if (previous?.pay_to == null) return null;
  return !sameValue(previous.pay_to, current.pay_to);
}

/** Equality where `0x` hex values ignore case (EIP-55 checksums are only casing) and others are exact. */
function sameValue(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  const hex = /^0x/i;
  return hex.test(a) && hex.test(b) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

function wholeDays(since: string, now: Date): number | null {
  const elapsed = now.getTime() - Date.parse(since);
  if (!Number.isFinite(elapsed)) return null;
  return Math.max(0, Math.floor(elapsed / DAY_MS));
}
