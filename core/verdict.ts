/**
 * The verdict over one probe: docs/api.md §3.1 rules 1–10 and 12 (rule 11, on a challenge the client sent, is
 * `core/challenge-bound.ts`), tried in that order, and "Several options in
 * one challenge". Pure: the clock comes in as `now`.
 */
import { isAddressOn } from './address.ts';
import { compareAtomicToUsd, isAtomic, parseUsd } from './amount.ts';
import { checkExpiry, optionExpired } from './expiry.ts';
import { detectFreeTrial } from './free-trial.ts';
import type {
  Accept,
  Challenge,
  ChallengeResult,
  CheckRequest,
  Decision,
  ExpiryCheck,
  Listing,
  ProbeOutcome,
} from './model.ts';
import {
  BASE,
  canonicalUsdc,
  isCanonicalUsdc,
  isSupportedMainnet,
  normalizeNetwork,
  sameAddress,
} from './networks.ts';
import type { Reason, Verdict } from './reasons.ts';

/** Everything {@link decide} needs: the probe, its decoded challenge, the expectations and the clock. */
export type DecideInput = {
  outcome: ProbeOutcome;
  /** The decoded challenge of a response outcome; null when the outcome is not a response. */
  challenge: ChallengeResult | null;
  request: CheckRequest;
  listing: Listing | null;
  /** The clock, for the expiry check (rule 10). */
  now: Date;
};

/** What the live terms are compared against (docs/api.md §2.1 `expected_*`). */
export type Expectations = {
  network: string;
  payTo: string | null;
  source: 'request' | 'listing' | null;
};

/**
 * What the payment terms are compared against: the caller's `network`/`pay_to`, else the listing's, else
 * Base with no wallet. The source is `request` when the caller gave either field, `listing` when only the
 * listing did, null when neither did.
 * @example expectationsOf(request, null).network // 'eip155:8453'
 */
export function expectationsOf(request: CheckRequest, listing: Listing | null): Expectations {
  const network = normalizeNetwork(request.network ?? listing?.network ?? BASE);
  const payTo = request.payTo ?? listing?.payTo ?? null;
  const source =
    request.network !== null || request.payTo !== null
      ? 'request'
      : listing !== null && (listing.network !== null || listing.payTo !== null)
        ? 'listing'
        : null;
  return { network, payTo, source };
}

/**
 * Decides `pay`, `skip` or `recheck` for one probe (docs/api.md §3.1). Only an option on the expected
 * network, in that network's canonical USDC, paying the expected wallet, within the claimed and listed
 * price (and, when asked, not expiring within `skew_s`) can be approved; among several such options the
 * cheapest is approved, so a hostile first option is never the one chosen.
 * @example decide({ outcome, challenge, request, listing: null, now }).verdict // 'pay'
 */
export function decide(input: DecideInput): Decision {
  const { outcome, request, listing, now } = input;
  const expected = expectationsOf(request, listing);
  const response = outcome.kind === 'response' ? outcome.response : null;
  const challenge = response?.status === 402 && input.challenge?.ok ? input.challenge.value : null;
  const probedAt = new Date(outcome.probedAt);
  const expiry = request.checkExpiry
    ? checkExpiry(challenge?.accepts ?? [], probedAt, request.skewS, now)
    : null;
  const done = doneWith(baseDecision(challenge, expected, expiry));

  // Rules 1–2: the target itself failed. Only these (and free trials) give `recheck`.
  if (outcome.kind === 'blocked') return done('skip', 'ssrf_blocked');
  if (outcome.kind === 'timeout') return done('recheck', 'timeout');
  if (outcome.kind === 'unreachable') return done('recheck', 'unreachable');
  if (outcome.response.status >= 500) return done('recheck', 'server_error');

  // Rule 3: a free trial on any status.
  const trial = detectFreeTrial(outcome.response.headers);
  if (trial.active) return { ...done('recheck', 'free_trial_active'), freeTrialRemaining: trial.remaining };

  // Rules 4–5: are there terms, and can they be read? A non-atomic amount is never guessed at.
  if (outcome.response.status !== 402 || input.challenge === null) return done('skip', 'no_paywall');
  if (!input.challenge.ok) {
    return done('skip', input.challenge.kind === 'absent' ? 'no_paywall' : 'bad_challenge');
  }
  if (challenge === null || !usable(challenge)) return done('skip', 'bad_challenge');
  return decideTerms(challenge, { request, listing, expected, probedAt, now, expiry }, done);
}

/**
 * Rules 6–10 and 12 over options received another way than this service's own probe (a challenge a client sent with its
 * check, `core/challenge-bound.ts`), held to the same expectations. `receivedAt` stands for the probe time in the
 * expiry rule; an option that cannot be signed is `bad_challenge` as in rule 5.
 * @example decideOptions([option], { request, listing: null, receivedAt: now, now }).verdict // 'pay'
 */
export function decideOptions(
  accepts: Accept[],
  input: { request: CheckRequest; listing: Listing | null; receivedAt: Date; now: Date },
): Decision {
  const { request, listing, receivedAt, now } = input;
  const expected = expectationsOf(request, listing);
  const challenge: Challenge = {
    version: 2,
    source: 'body',
    lenient: false,
    accepts,
    resource: null,
    notes: [],
  };
  const expiry = request.checkExpiry ? checkExpiry(accepts, receivedAt, request.skewS, now) : null;
  const done = doneWith(baseDecision(challenge, expected, expiry));
  if (!usable(challenge)) return done('skip', 'bad_challenge');
  return decideTerms(challenge, { request, listing, expected, probedAt: receivedAt, now, expiry }, done);
}

/** The decision before any rule: `skip`/`bad_challenge` about the option the rules would look at first. */
function baseDecision(
  challenge: Challenge | null,
  expected: Expectations,
  expiry: ExpiryCheck | null,
): Decision {
  return {
    verdict: 'skip',
    reason: 'bad_challenge',
    option: challenge === null ? null : defaultOption(challenge.accepts, expected),
    challenge,
    freeTrialRemaining: null,
    expectedPayTo: expected.payTo,
    expectedNetwork: expected.network,
    expectedSource: expected.source,
    expiry,
  };
}

/** A rule's decision: `base` with its verdict, reason and option. */
function doneWith(base: Decision): Done {
  return (verdict, reason, option = base.option) => ({ ...base, verdict, reason, option });
}

type Context = {
  request: CheckRequest;
  listing: Listing | null;
  expected: Expectations;
  probedAt: Date;
  now: Date;
  expiry: ExpiryCheck | null;
};

type Done = (verdict: Verdict, reason: Reason, option?: Accept | null) => Decision;

/** Rules 6–10 and 12 over a decoded, usable challenge. */
function decideTerms(challenge: Challenge, ctx: Context, done: Done): Decision {
  const { expected, request } = ctx;
  const accepts = challenge.accepts;

  // Rule 6. An expected network that is itself unsupported (a testnet) is reported as unsupported too.
  if (!accepts.some((a) => isSupportedMainnet(normalizeNetwork(a.network)))) {
    return done('skip', 'network_unsupported');
  }
  const onNetwork = accepts.filter((a) => normalizeNetwork(a.network) === expected.network);
  if (onNetwork.length === 0) return done('skip', 'network_mismatch');
  const usdc = canonicalUsdc(expected.network);
  if (usdc === null) return done('skip', 'network_unsupported', onNetwork[0]);

  // Rule 7.
  const inUsdc = onNetwork.filter((a) => isCanonicalUsdc(expected.network, a.asset));
  if (inUsdc.length === 0) return done('skip', 'asset_not_usdc', onNetwork[0]);

  // Rule 8: without an expected wallet there is nothing to mismatch (confidence says `low` instead).
  const expectedPayTo = expected.payTo;
  const toWallet =
    expectedPayTo === null ? inUsdc : inUsdc.filter((a) => sameAddress(a.payTo, expectedPayTo));
  if (toWallet.length === 0) return done('skip', 'pay_to_mismatch', inUsdc[0]);

  // Rule 9. A claimed price that cannot be read fails closed; a listing price that is not a usable number
  // is treated as absent (listings come from third-party crawls).
  const claimed = request.claimedPrice === null ? null : parseUsd(request.claimedPrice);
  if (request.claimedPrice !== null && claimed === null) {
    return done('skip', 'price_mismatch', cheapest(toWallet));
  }
  const listed = listingPrice(ctx.listing);
  const withinPrice = toWallet.filter(
    (a) =>
      (claimed === null || compareAtomicToUsd(a.amount, usdc.decimals, claimed) <= 0) &&
      (listed === null || compareAtomicToUsd(a.amount, usdc.decimals, listed) <= 0),
  );
  if (withinPrice.length === 0) return done('skip', 'price_mismatch', cheapest(toWallet));

  // Rule 10. Beyond docs/api.md §3.1 ("every Base USDC option expired"), the option approved must itself be live.
  let payable = withinPrice;
  if (request.checkExpiry) {
    payable = withinPrice.filter((a) => !optionExpired(a, ctx.probedAt, request.skewS, ctx.now));
    if (ctx.expiry?.expired === true || payable.length === 0)
      return done('skip', 'challenge_expired', cheapest(withinPrice));
  }

  // Rule 12.
  const chosen = cheapest(payable);
  const below = listed !== null && compareAtomicToUsd(chosen.amount, usdc.decimals, listed) < 0;
  return done('pay', below ? 'price_below_listing' : 'price_ok', chosen);
}

/**
 * A challenge the later rules can work on: at least one option, every amount a canonical atomic string, every
 * payee and asset signable on its network (decodeChallenge refuses these already; `decide` takes any challenge).
 */
function usable(challenge: Challenge): boolean {
  return (
    challenge.accepts.length > 0 &&
    challenge.accepts.every(
      (a) =>
        isAtomic(a.amount) &&
        isAddressOn(normalizeNetwork(a.network), a.payTo) !== false &&
        isAddressOn(normalizeNetwork(a.network), a.asset) !== false,
    )
  );
}

/** The listing's price as a decimal string, or null when there is none or it is not a non-negative number. */
function listingPrice(listing: Listing | null): string | null {
  const price = listing?.priceUsd ?? null;
  if (price === null || !Number.isFinite(price) || price < 0) return null;
  return parseUsd(String(price));
}

/** The option with the lowest atomic amount; the first one on ties. Never called with an empty list. */
function cheapest(options: Accept[]): Accept {
  let best = options[0]!;
  for (const option of options) if (BigInt(option.amount) < BigInt(best.amount)) best = option;
  return best;
}

/**
 * Decision.option before the rules narrow it: the payable option (expected network, canonical USDC,
 * preferring the expected wallet), else the first option on the expected network, else the first option.
 */
function defaultOption(accepts: Accept[], expected: Expectations): Accept | null {
  const onNetwork = accepts.filter((a) => normalizeNetwork(a.network) === expected.network);
  const inUsdc = onNetwork.filter((a) => isCanonicalUsdc(expected.network, a.asset));
  const expectedPayTo = expected.payTo;
  const toWallet = expectedPayTo === null ? [] : inUsdc.filter((a) => sameAddress(a.payTo, expectedPayTo));
  return toWallet[0] ?? inUsdc[0] ?? onNetwork[0] ?? accepts[0] ?? null;
}
