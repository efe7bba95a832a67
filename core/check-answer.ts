/**
 * The shared check engine, pure part: from one probe, the expectations and what came before, the
 * decision, the answer shapes of docs/api.md §2.1 (paid, exempt) and §2.4 (free, dry run) and the unsigned receipt. The
 * live check (`api/`) and the crawl (`crawl/`) both assemble checks here, so a crawl receipt is a check receipt.
 * Everything with a side effect (probing, the clock, ids, signing, storage) happens in the callers.
 */

import type { CheckFreeAnswer, CheckFullAnswer } from './answer-schemas.ts';
import { decodeChallenge } from './challenge.ts';
import { decideOnSentChallenge, type SentCheck, sentChallengeFacts } from './challenge-bound.ts';
import { confidence } from './confidence.ts';
import { observationOf, payToChanged, summarizeHistory } from './history.ts';
import { LIMITS } from './limits.ts';
import type { ChallengeResult, CheckRequest, Decision, Listing, Observation, ProbeOutcome } from './model.ts';
import { buildPayment, optionPriceUsd, paymentTermsSha256 } from './payment.ts';
import { assessQuality, type Quality } from './quality.ts';
import { reasonText } from './reasons.ts';
import { badgeSnippets, receiptUrlOf } from './receipt.ts';
import { decide } from './verdict.ts';

/** Everything one check is assembled from. */
export type CheckInput = {
  outcome: ProbeOutcome;
  /** The probe was reused from the 5-minute cache (docs/api.md §2.3 `cached`). */
  cached: boolean;
  cacheTtlS: number;
  request: CheckRequest;
  mode: 'live' | 'dry-run';
  /** `self-checked` only for the service's own self-test client (docs/api.md §2.1). */
  checkType: 'dry-run' | 'self-checked';
  listing: Listing | null;
  /** Earlier observations of the endpoint, newest first; null when the store is unavailable (docs/api.md §2.1: then
   *  `history` and `history_observations` are null). */
  previous: Observation[] | null;
  now: Date;
  /** The receipt id, already drawn (`core/receipt.ts` `newReceiptId`). */
  id: string;
  /** Public origin for the receipt URL and badge snippet, without a trailing slash. */
  baseUrl: string;
  /** Receipt members that say who or what asked (task, client, ref; or the crawl's run and listing). */
  context: Record<string, unknown>;
  /** The challenge the caller received and sent (`payment_required`): the verdict is then on it
   *  (`core/challenge-bound.ts`). Absent or null: the plain check. */
  sent?: SentCheck | null;
};

/** An assembled check, before it is signed. */
export type CheckAssembly = {
  decision: Decision;
  /** This probe's observation; null when the probe was reused (it was recorded when it was made). */
  observation: Observation | null;
  /** The paid-tier answer of docs/api.md §2.1, without `access` and the reputation the route adds. */
  full: CheckFullAnswer;
  /** The free-tier answer of docs/api.md §2.4, without `access`. */
  free: CheckFreeAnswer;
  /** The receipt without `access`, `kid` and `signature`. */
  unsigned: Record<string, unknown> & { id: string; issued_at: string };
  /** The receipt of a free or dry-run check: the free answer, never the paid detail. */
  freeUnsigned: Record<string, unknown> & { id: string; issued_at: string };
};

/**
 * What a probe says, decoded once: a reused probe is the same object, and its challenge and quality depend on
 * nothing else, so every check that reuses it shares one decode.
 */
const decoded = new WeakMap<ProbeOutcome, { challenge: ChallengeResult | null; quality: Quality }>();

/** The decoded challenge and quality of a probe (memoized per outcome object). */
export function readOutcome(outcome: ProbeOutcome): { challenge: ChallengeResult | null; quality: Quality } {
  let read = decoded.get(outcome);
  if (!read) {
    const challenge = outcome.kind === 'response' ? decodeChallenge(outcome.response) : null;
    read = { challenge, quality: assessQuality(outcome, challenge) };
    decoded.set(outcome, read);
  }
  return read;
}

/**
 * Assembles one check: decision, answers and unsigned receipt. A dry run is never an approval: no payment object
 * and no terms hash (docs/api.md §2.4).
 * @example const { full, free, unsigned } = assembleCheck({ outcome, cached: false, … })
 */
export function assembleCheck(input: CheckInput): CheckAssembly {
  const { outcome, request, now } = input;
  const read = readOutcome(outcome);
  const live = decide({ outcome, challenge: read.challenge, request, listing: input.listing, now });
  const sent = input.sent ?? null;
  const bound =
    sent === null ? null : decideOnSentChallenge({ live, sent, request, listing: input.listing, now });
  const decision = bound?.decision ?? live;
  // The history records what the probe saw, never terms a caller sent.
  const seen = seenBefore(input, observationOf(outcome, live));
  const facts = checkFacts(input, decision, read, seen);
  // Only when a challenge was sent: a check without one keeps its bytes (docs/decisions.md "Receipts").
  const sentFacts =
    sent === null || bound === null ? {} : { sent_challenge: sentChallengeFacts(sent, bound.requirement) };
  const context = {
    id: input.id,
    type: 'check',
    issued_at: now.toISOString(),
    url: request.url,
    method: request.method,
    mode: input.mode,
    ...input.context,
  };
  const tail = {
    http_status: outcome.kind === 'response' ? outcome.response.status : null,
    badge: badgeSnippets({
      baseUrl: input.baseUrl,
      host: new URL(request.url).host,
      receiptUrl: facts.receipt_url,
      verdict: decision.verdict,
    }),
  };
  const free = {
    verdict: decision.verdict,
    reason: reasonText(decision.reason),
    payment_terms_sha256: facts.payment_terms_sha256,
    receipt_id: input.id,
    receipt_url: facts.receipt_url,
    pay_to_changed: facts.pay_to_changed,
    reason_code: decision.reason,
    check_type: facts.check_type,
    ...sentFacts,
  };
  return {
    decision,
    observation: input.cached ? null : seen.observation,
    full: { ...facts, history_observations: seen.known ? seen.observations : null, ...sentFacts },
    free,
    unsigned: { ...context, ...facts, ...sentFacts, ...tail },
    // A receipt holds the answer its caller got (docs/api.md §2.6): the free answer (the reason by its code, as in every
    // receipt), what the public-state rule reads (where the expectation came from, the caller's own claim, whether
    // an expiry check was asked) and when the probe was made; never the paid detail (payment, quality, expiry block).
    freeUnsigned: {
      ...context,
      ...free,
      reason: decision.reason,
      expected_source: facts.expected_source,
      claimed_price_usd: facts.claimed_price_usd,
      probe: facts.probe,
      ...(request.checkExpiry ? { check_expiry: true } : {}),
      ...tail,
    },
  };
}

/** What came before this probe: whether it is known at all, and the history it makes with this observation. */
type Seen = { known: boolean; before: Observation[]; observation: Observation; observations: Observation[] };

function seenBefore(input: CheckInput, observation: Observation): Seen {
  // A reused probe was recorded when it was made; compare against what came before it.
  const before = (input.previous ?? []).filter((item) => item.observed_at !== input.outcome.probedAt);
  return {
    known: input.previous !== null,
    before,
    observation,
    observations: [observation, ...before].slice(0, LIMITS.historyKept),
  };
}

/** The paid answer's members, in their published order, that the receipt carries too. */
function checkFacts(
  input: CheckInput,
  decision: Decision,
  read: { challenge: ChallengeResult | null; quality: Quality },
  seen: Seen,
) {
  const { outcome, request } = input;
  const dryRun = input.mode === 'dry-run';
  const option = decision.option;
  const pay = decision.verdict === 'pay' && option !== null && !dryRun;
  const termsHash = pay
    ? paymentTermsSha256({
        network: option.network,
        asset: option.asset,
        amountAtomic: option.amount,
        payTo: option.payTo,
      })
    : null;
  return {
    verdict: decision.verdict,
    reason: decision.reason,
    ...(decision.reason === 'free_trial_active' ? { free_trial_remaining: decision.freeTrialRemaining } : {}),
    quoted_price_usd: option === null ? null : optionPriceUsd(option),
    claimed_price_usd: request.claimedPrice === null ? null : Number(request.claimedPrice),
    pay_to: option?.payTo ?? null,
    network: option?.network ?? null,
    asset: option?.asset ?? null,
    expected_pay_to: decision.expectedPayTo,
    expected_network: decision.expectedNetwork,
    expected_source: decision.expectedSource,
    // A sent requirement was received about now; the probe's own option when the probe was made.
    payment: pay ? buildPayment(option, input.sent ? input.now : new Date(outcome.probedAt)) : null,
    probe: {
      probed_at: outcome.probedAt,
      cached: input.cached,
      cache_ttl_s: input.cacheTtlS,
      // Only when the listed GET answered 405 and the 402 came from the POST retry (docs/decisions.md "The probe").
      ...(outcome.kind === 'response' &&
      outcome.response.status === 402 &&
      outcome.response.methodUsed !== request.method
        ? { method_used: outcome.response.methodUsed }
        : {}),
    },
    check_type: dryRun ? 'dry-run' : input.checkType,
    payment_terms_sha256: termsHash,
    receipt_id: input.id,
    receipt_url: receiptUrlOf(input.baseUrl, input.id),
    pay_to_changed: seen.known ? payToChanged(seen.before, seen.observation) : null,
    reason_code: decision.reason,
    confidence: confidence({
      fresh: !input.cached,
      lenient: read.challenge?.ok === true && read.challenge.value.lenient,
      expectedSource: decision.expectedSource,
      expectedPayTo: decision.expectedPayTo,
    }),
    history: seen.known ? summarizeHistory(seen.observations, input.now) : null,
    quality: read.quality,
    ...(decision.expiry ? { expiry_check: decision.expiry } : {}),
  };
}
