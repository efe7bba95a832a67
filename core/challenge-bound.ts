/**
 * The verdict on a challenge a client received (docs/api.md §3.1 rule 11, "The check on a received challenge"): the
 * check then answers about the requirement the client will sign, not only about what the service's own probe saw.
 * Pure: the probe's decision, the sent challenge and the clock come in.
 */
import type { Accept, CheckRequest, Decision, Listing } from './model.ts';
import { paymentTermsSha256 } from './payment.ts';
import { type SentChallenge, sameOfferedTerms } from './sent-challenge.ts';
import { decideOptions } from './verdict.ts';

/** What the caller sent: the challenge, and the requirement it selected (null: the one Spotcheck would choose). */
export type SentCheck = { challenge: SentChallenge; selected: Accept | null };

/** Everything {@link decideOnSentChallenge} needs. */
export type BoundInput = {
  /** The decision over the live probe, exactly as the plain check takes it. */
  live: Decision;
  sent: SentCheck;
  request: CheckRequest;
  listing: Listing | null;
  now: Date;
};

/** The decision on a sent challenge, and the requirement it judged (the one the client would sign). */
export type BoundDecision = { decision: Decision; requirement: Accept | null };

/**
 * Decides on the challenge the client received. When the live probe is not `pay` its answer stands: the target
 * failed, showed no terms Spotcheck can read, or its own terms fail a rule, and the caller learns that by the plain
 * reason. When it is `pay`, the requirement to sign (the selected one, else the one the rules choose from the sent
 * challenge) must pass rules 6–10 on its own and its four terms must be among the options the live probe sees now;
 * otherwise `skip`/`challenge_mismatch`. The decision's option is then that requirement, so the payment object and
 * `payment_terms_sha256` describe exactly what the client will sign.
 * @example decideOnSentChallenge({ live, sent, request, listing: null, now }).decision.reason // 'price_ok'
 */
export function decideOnSentChallenge(input: BoundInput): BoundDecision {
  const { live, sent } = input;
  const own = decideOptions(sent.selected === null ? sent.challenge.accepts : [sent.selected], {
    request: input.request,
    listing: input.listing,
    receivedAt: input.now,
    now: input.now,
  });
  const requirement = own.option;
  if (live.verdict !== 'pay' || live.challenge === null) return { decision: live, requirement };
  const offeredLive =
    requirement !== null && live.challenge.accepts.some((a) => sameOfferedTerms(a, requirement));
  if (own.verdict === 'pay' && offeredLive) {
    return { decision: { ...live, reason: own.reason, option: requirement }, requirement };
  }
  return {
    decision: { ...live, verdict: 'skip', reason: 'challenge_mismatch', option: requirement },
    requirement,
  };
}

/**
 * The answer and receipt member that says which challenge was checked (`sent_challenge`, docs/api.md §2.1): present
 * only when the caller sent one, so a check without it is byte for byte what it was before.
 */
export function sentChallengeFacts(sent: SentCheck, requirement: Accept | null) {
  return {
    payment_required_sha256: sent.challenge.sha256,
    selected_by: sent.selected === null ? ('spotcheck' as const) : ('caller' as const),
    selected_terms_sha256:
      requirement === null
        ? null
        : paymentTermsSha256({
            network: requirement.network,
            asset: requirement.asset,
            amountAtomic: requirement.amount,
            payTo: requirement.payTo,
          }),
  };
}
