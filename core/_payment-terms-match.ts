/**
 * `terms_match` of the payment status answer (docs/api.md §2.7): what the payment is compared against and how each term
 * compares. Internal to `core/payment-status.ts`.
 */
import type { Challenge } from './model.ts';
import { BASE, BASE_USDC, isCanonicalUsdc, normalizeNetwork, sameAddress } from './networks.ts';
import type { PaymentStatusQuery, PaymentTerms } from './payment-input.ts';

/** What the payment is compared against in `terms_match`: the caller's `terms`, the seller's live 402, or the
 *  requirements the payload itself accepted (the default). `contact` feeds `claim.contact`. */
export type ExpectedTerms = PaymentTerms & {
  source: 'terms' | 'seller_challenge' | 'payment_payload';
  contact: string | null;
};
/** How one term compares; `unknown` when either side is not known. */
export type Match = 'match' | 'mismatch' | 'unknown';
/** `terms_match` of the answer: each term, what it was compared against, and with what (docs/api.md §2.7). */
export type TermsMatch = {
  amount: Match;
  pay_to: Match;
  asset: Match;
  network: Match;
  source: ExpectedTerms['source'] | null;
  compared: 'authorization' | 'transfer' | null;
};

/**
 * The expectation of `terms_match` from a seller's live 402 (the route probes `seller_url`): the exact Base USDC
 * option if there is one, else the first option, so a seller asking elsewhere shows as a mismatch.
 */
export function expectedTermsFromChallenge(challenge: Challenge): ExpectedTerms | null {
  const option =
    challenge.accepts.find(
      (accept) => accept.scheme === 'exact' && isCanonicalUsdc(accept.network, accept.asset),
    ) ?? challenge.accepts[0];
  if (option === undefined) return null;
  return {
    amount: option.amount,
    payTo: option.payTo,
    asset: option.asset,
    network: option.network,
    source: 'seller_challenge',
    contact: challenge.resource?.url ?? null,
  };
}

/** The default expectation when the route has none: the caller's `terms`, else what the payload accepted. */
export function fallbackExpectation(query: PaymentStatusQuery): ExpectedTerms | null {
  if (query.terms !== null) return { ...query.terms, source: 'terms', contact: null };
  if (query.accepted !== null) return { ...query.accepted, source: 'payment_payload', contact: null };
  return null;
}

/** Compares what the authorization (or its transfer) shows with the expectation, term by term. */
export function termsMatch(
  actual: Pick<PaymentTerms, 'amount' | 'payTo'>,
  identified: boolean,
  expected: ExpectedTerms | null,
  compared: TermsMatch['compared'],
): TermsMatch {
  // Only Base USDC authorizations are read (docs/api.md §5.3), so once the authorization is identified its asset and
  // network are known.
  return {
    amount: compareWith(
      expected?.amount,
      actual.amount,
      (a, b) => /^\d+$/.test(a) && /^\d+$/.test(b) && BigInt(a) === BigInt(b),
    ),
    pay_to: compareWith(expected?.payTo, actual.payTo, sameAddress),
    asset: compareWith(expected?.asset, identified ? BASE_USDC : null, sameAddress),
    network: compareWith(expected?.network, identified ? BASE : null, (a, b) => normalizeNetwork(a) === b),
    source: expected?.source ?? null,
    compared,
  };
}

function compareWith(
  expected: string | null | undefined,
  actual: string | null,
  same: (expected: string, actual: string) => boolean,
): Match {
  if (expected == null || actual === null) return 'unknown';
  return same(expected, actual) ? 'match' : 'mismatch';
}
