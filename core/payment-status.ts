/**
 * Payment status rules (spec §2.7, §3.2; design.md "Payment status"): what the chain evidence of two or more
 * RPC sources says about one EIP-3009 authorization, and whether signing a new payment is safe.
 *
 * Policies (spec silent, written down here and in the rules document):
 * - Chain time is the head block's timestamp, never a clock. Where several sources agree, the lowest head time
 *   among them is used, so a source that runs ahead cannot make an authorization look expired early.
 * - A source whose head is below the block of an event another source found has not seen that block yet: it
 *   neither agrees nor disagrees. Any other contradiction between sources gives `unknown`.
 * - Sources are independent when their names differ; the operator configures distinct providers.
 * - A `valid_before` sent beside `from` and `nonce` is trusted as spec §4 says; `cannot_know` says so.
 */
import type { Challenge } from './model.ts';
import { BASE, BASE_USDC, isCanonicalUsdc, normalizeNetwork, sameAddress } from './networks.ts';
import type { Hex, PaymentStatusQuery, PaymentTerms } from './payment-input.ts';

/** What the chain reader asks about: the authorization (from, nonce) and/or a settlement transaction. */
export type ChainQuery = Pick<PaymentStatusQuery, 'from' | 'nonce' | 'txHash' | 'validAfter' | 'validBefore'>;

export type LogRef = { txHash: Hex; blockNumber: number };
export type TransferEvidence = { from: Hex; to: Hex; value: bigint };
export type ReceiptEvidence = {
  txHash: Hex;
  status: 'success' | 'reverted';
  blockNumber: number;
  /** The USDC `Transfer` out of the authorizer in this transaction, if any. */
  transfer: TransferEvidence | null;
};
/** An authorization recovered from a transaction (its logs or its calldata) when only `tx_hash` was sent. */
export type RecoveredAuthorization = {
  from: Hex;
  nonce: Hex;
  to: Hex | null;
  value: bigint | null;
  validAfter: bigint | null;
  validBefore: bigint | null;
};

/** What one RPC source reported. A source that failed has `ok: false`, its error, and nulls elsewhere. */
export type SourceEvidence = {
  name: string;
  ok: boolean;
  head: number | null;
  /** Unix seconds of the head block. */
  headTime: number | null;
  /** `authorizationState(from, nonce)` at the head: true for used or canceled; null when (from, nonce) is unknown. */
  nonceUsed: boolean | null;
  usedLog: LogRef | null;
  canceledLog: LogRef | null;
  receipt: ReceiptEvidence | null;
  recovered: RecoveredAuthorization | null;
  error: string | null;
  rpcCalls: number;
};

export type ChainEvidence = { sources: SourceEvidence[] };

/** What the payment is compared against in `terms_match`: the caller's `terms`, the seller's live 402, or the
 *  requirements the payload itself accepted (the default). `contact` feeds `claim.contact`. */
export type ExpectedTerms = PaymentTerms & {
  source: 'terms' | 'seller_challenge' | 'payment_payload';
  contact: string | null;
};
export type Match = 'match' | 'mismatch' | 'unknown';
export type TermsMatch = {
  amount: Match;
  pay_to: Match;
  asset: Match;
  network: Match;
  source: ExpectedTerms['source'] | null;
  compared: 'authorization' | 'transfer' | null;
};

export type PaymentStatus = 'landed' | 'not_landed' | 'pending' | 'canceled' | 'unknown';

/** Machine reasons of payment status and the status each gives; published in receipts, never renamed. */
export const PAYMENT_STATUS_REASONS = {
  settled_onchain: 'landed',
  canceled_onchain: 'canceled',
  unused_not_expired: 'pending',
  expired_unused: 'not_landed',
  sources_disagree: 'unknown',
  single_source: 'unknown',
  valid_before_unknown: 'unknown',
  event_not_found: 'unknown',
  tx_not_found: 'unknown',
  authorization_unknown: 'unknown',
  chain_unavailable: 'unknown',
} as const satisfies Record<string, PaymentStatus>;
export type PaymentStatusReason = keyof typeof PAYMENT_STATUS_REASONS;

const WHY: Record<PaymentStatusReason, string> = {
  settled_onchain:
    'The authorization was used on chain in a successful transaction: the money moved. Do not sign a new payment.',
  canceled_onchain:
    'The payer canceled this authorization on chain: it can never settle, and no money moved with it.',
  unused_not_expired:
    'The authorization is not used yet and may still settle. Do not sign a new payment before wait_until; check again then.',
  expired_unused: `Two independent chain sources agree the nonce is unused and chain time is more than 120 s past valid_before: it can never settle, so signing a new payment is safe.`,
  sources_disagree: 'The chain sources disagree about this authorization; check again shortly.',
  single_source:
    'The authorization has expired unused according to one chain source only; two independent sources are needed before re-signing.',
  valid_before_unknown:
    'The nonce is unused, but without valid_before (or the payload) its expiry is unknown.',
  event_not_found:
    'The authorization is used or canceled on chain, but its event or successful transaction was not found in the blocks searched.',
  tx_not_found: 'The transaction was not found on chain, or it carries no USDC authorization.',
  authorization_unknown: 'The authorization could not be identified on chain.',
  chain_unavailable: 'No chain source answered.',
};

/** Plain words for a payment status reason, as `why` and the rules document show them. */
export function paymentStatusReasonText(reason: PaymentStatusReason): string {
  return WHY[reason];
}

/** Spec §3.2 and §8. */
export const MIN_CONFIRMATIONS = 10;
export const RESIGN_MARGIN_S = 120;

/** The payment status answer without the fields the route adds (`id`, `type`, `receipt`, `access`). */
export type PaymentStatusResult = {
  status: PaymentStatus;
  reason: PaymentStatusReason;
  safe_to_retry_same_payload: true;
  safe_to_resign: boolean;
  why: string;
  wait_until: string | null;
  authorization: {
    from: Hex | null;
    nonce: Hex | null;
    used_onchain: boolean;
    event: 'AuthorizationUsed' | 'AuthorizationCanceled' | null;
    valid_before: string | null;
    expired: boolean;
  };
  tx: {
    hash: Hex;
    block: number;
    status: 'success' | 'reverted';
    transfer: { from: Hex; to: Hex; value: string } | null;
  } | null;
  terms_match: TermsMatch;
  claim: { seller_url: string | null; contact: string | null; evidence: 'receipt' };
  cannot_know: string[];
  finality: { confirmations: number | null; min_confirmations: number; reorg_safe: boolean };
  rpc: { sources: { name: string; ok: boolean; head: number | null }[]; sources_agreed: number };
};

/** True when no chain source answered: the route answers 503 `chain_unavailable` and charges nothing (§7). */
export function noSourceAnswered(evidence: ChainEvidence): boolean {
  return !evidence.sources.some((source) => source.ok);
}

/**
 * Decides the payment status of one authorization from the evidence of the chain sources.
 *
 * @example decidePaymentStatus({ query, evidence, termsExpected: null }).status // 'landed'
 */
export function decidePaymentStatus(input: {
  query: PaymentStatusQuery;
  evidence: ChainEvidence;
  termsExpected: ExpectedTerms | null;
}): PaymentStatusResult {
  const { query, evidence } = input;
  const answered = evidence.sources.filter((source) => source.ok);
  const recovered = answered.find((source) => source.recovered !== null)?.recovered ?? null;
  const from = query.from ?? recovered?.from ?? null;
  const nonce = query.nonce ?? recovered?.nonce ?? null;
  const validBefore = query.validBefore ?? recovered?.validBefore ?? null;
  const { reason, agreeing, receipt: eventReceipt } = classify(answered, validBefore, query.txHash !== null);
  const status = PAYMENT_STATUS_REASONS[reason];

  const receipt = eventReceipt ?? answered.find((source) => source.receipt !== null)?.receipt ?? null;
  // Conservative: the lowest head among agreeing sources gives the fewest confirmations and the earliest time.
  const basis = agreeing.length > 0 ? agreeing : answered;
  const head = minOf(basis.map((source) => source.head));
  const chainTime = minOf(basis.map((source) => source.headTime));
  const confirmations =
    receipt === null || head === null ? null : Math.max(1, head - receipt.blockNumber + 1);
  const waitUntil =
    reason === 'unused_not_expired' && validBefore !== null ? isoSeconds(deadline(validBefore)) : null;
  const known = {
    amount: (query.value ?? recovered?.value ?? receipt?.transfer?.value ?? null)?.toString() ?? null,
    payTo: query.to ?? recovered?.to ?? receipt?.transfer?.to ?? null,
  };
  const fromAuthorization = query.value !== null || (recovered?.value ?? null) !== null;
  const compared = fromAuthorization ? 'authorization' : receipt?.transfer ? 'transfer' : null;
  const expected = input.termsExpected ?? fallbackExpectation(query);

  return {
    status,
    reason,
    safe_to_retry_same_payload: true,
    // Spec §3.2: the one case; classify() only reaches it with two agreeing sources past validBefore + 120 s.
    safe_to_resign: reason === 'expired_unused',
    why: WHY[reason] + (reason === 'settled_onchain' && receipt ? ` Transaction ${receipt.txHash}.` : ''),
    wait_until: waitUntil,
    authorization: {
      from,
      nonce,
      used_onchain: status === 'landed' || status === 'canceled' || reason === 'event_not_found',
      event:
        status === 'landed' ? 'AuthorizationUsed' : status === 'canceled' ? 'AuthorizationCanceled' : null,
      valid_before: validBefore === null ? null : isoSeconds(validBefore),
      expired: validBefore !== null && chainTime !== null && BigInt(chainTime) >= validBefore,
    },
    tx: receipt && {
      hash: receipt.txHash,
      block: receipt.blockNumber,
      status: receipt.status,
      transfer: receipt.transfer && { ...receipt.transfer, value: receipt.transfer.value.toString() },
    },
    terms_match: termsMatch(known, from !== null && nonce !== null, expected, compared),
    claim: { seller_url: query.sellerUrl, contact: expected?.contact ?? null, evidence: 'receipt' },
    cannot_know: cannotKnow(status, query.source !== 'payment_payload' && query.validBefore !== null),
    finality: {
      confirmations,
      min_confirmations: MIN_CONFIRMATIONS,
      reorg_safe: confirmations !== null && confirmations >= MIN_CONFIRMATIONS,
    },
    rpc: {
      sources: evidence.sources.map((source) => ({ name: source.name, ok: source.ok, head: source.head })),
      sources_agreed: new Set(agreeing.map((source) => source.name)).size,
    },
  };
}

type Outcome = { reason: PaymentStatusReason; agreeing: SourceEvidence[]; receipt: ReceiptEvidence | null };

function classify(answered: SourceEvidence[], validBefore: bigint | null, hasTxHash: boolean): Outcome {
  const out = (
    reason: PaymentStatusReason,
    agreeing: SourceEvidence[] = [],
    receipt: ReceiptEvidence | null = null,
  ) => ({
    reason,
    agreeing,
    receipt,
  });
  if (answered.length === 0) return out('chain_unavailable');

  const withUsed = answered.filter((source) => source.usedLog !== null);
  const withCanceled = answered.filter((source) => source.canceledLog !== null);
  if (withUsed.length > 0 && withCanceled.length > 0) return out('sources_disagree');
  const landed = withUsed.length > 0;
  const found = landed ? withUsed : withCanceled;
  const logOf = (source: SourceEvidence) => (landed ? source.usedLog : source.canceledLog);
  const log = found[0] ? logOf(found[0]) : null;
  if (log) {
    // A source still below the event's block has not seen it yet: only one that has seen the block and reports
    // the nonce unused, or another event, contradicts.
    const contradicts = (source: SourceEvidence) =>
      logOf(source)?.txHash !== log.txHash &&
      (logOf(source) !== null || (source.nonceUsed === false && (source.head ?? 0) >= log.blockNumber));
    if (answered.some(contradicts)) return out('sources_disagree');
    if (!landed) return out('canceled_onchain', found);
    const receipt = found.find((source) => source.receipt?.txHash === log.txHash)?.receipt ?? null;
    if (receipt?.status !== 'success') return out('event_not_found', found);
    return out('settled_onchain', found, receipt);
  }

  const unused = answered.filter((source) => source.nonceUsed === false);
  const usedWithoutLog = answered.filter((source) => source.nonceUsed === true);
  if (unused.length > 0 && usedWithoutLog.length > 0) return out('sources_disagree');
  if (usedWithoutLog.length > 0) return out('event_not_found', usedWithoutLog);
  if (unused.length === 0) return out(hasTxHash ? 'tx_not_found' : 'authorization_unknown');
  if (validBefore === null) return out('valid_before_unknown', unused);
  const chainTime = minOf(unused.map((source) => source.headTime));
  if (chainTime === null) return out('sources_disagree');
  // Spec §3.2: "past validBefore plus 120 seconds"; at exactly that second it is not yet past.
  if (BigInt(chainTime) <= deadline(validBefore)) return out('unused_not_expired', unused);
  if (new Set(unused.map((source) => source.name)).size < 2) return out('single_source', unused);
  return out('expired_unused', unused);
}

function deadline(validBefore: bigint): bigint {
  return validBefore + BigInt(RESIGN_MARGIN_S);
}

function fallbackExpectation(query: PaymentStatusQuery): ExpectedTerms | null {
  if (query.terms !== null) return { ...query.terms, source: 'terms', contact: null };
  if (query.accepted !== null) return { ...query.accepted, source: 'payment_payload', contact: null };
  return null;
}

function cannotKnow(status: PaymentStatus, validBeforeFromCaller: boolean): string[] {
  const always = [
    'whether the seller delivered what was paid for',
    'whether the seller credited this payment to your request',
  ];
  if (status === 'landed' || status === 'canceled') return always;
  return [
    ...always,
    'whether a facilitator or the seller still holds the signed payload and will submit it before valid_before',
    // Spec §4 trusts a bare valid_before; only the signed payload proves it.
    ...(validBeforeFromCaller ? ['whether the valid_before you sent is the one the payer signed'] : []),
  ];
}

function minOf(values: (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : Math.min(...known);
}

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

/** ISO 8601 of unix seconds; null past what a Date can hold (a payload may carry validBefore = 2^256 - 1). */
export function isoSeconds(seconds: bigint): string | null {
  return seconds >= 0n && seconds <= 8_640_000_000_000n
    ? new Date(Number(seconds) * 1000).toISOString()
    : null;
}

function termsMatch(
  actual: Pick<PaymentTerms, 'amount' | 'payTo'>,
  identified: boolean,
  expected: ExpectedTerms | null,
  compared: TermsMatch['compared'],
): TermsMatch {
  // Only Base USDC authorizations are read (spec §5.3), so once the authorization is identified its asset and
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
