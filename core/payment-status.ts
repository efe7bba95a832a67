/**
 * Payment status rules (docs/api.md §2.7, §3.2; docs/api.md §3.2): what the chain evidence of two or more
 * RPC sources says about one EIP-3009 authorization, and whether signing a new payment is safe.
 *
 * Policies (spec silent, written down here and in the rules document):
 * - Chain time is the head block's timestamp, never a clock. Where several sources agree, the lowest head time
 *   among them is used, so a source that runs ahead cannot make an authorization look expired early.
 * - A source whose head is below the block of an event another source found has not seen that block yet: it
 *   neither agrees nor disagrees. Any other contradiction between sources gives `unknown`.
 * - Sources are independent when their names differ; the operator configures distinct providers.
 * - A `valid_before` sent beside `from` and `nonce` is trusted as docs/api.md §4 says; `cannot_know` says so.
 *
 * The answer shapes are in `_payment-status-answer.ts`, the evidence in `_payment-evidence.ts` and `terms_match`
 * in `_payment-terms-match.ts`.
 */
import type { ChainEvidence, ReceiptEvidence, SourceEvidence } from './_payment-evidence.ts';
import {
  PAYMENT_STATUS_REASONS,
  type PaymentStatus,
  type PaymentStatusReason,
  type PaymentStatusResult,
  paymentStatusReasonText,
} from './_payment-status-answer.ts';
import { type ExpectedTerms, fallbackExpectation, termsMatch } from './_payment-terms-match.ts';
import type { PaymentStatusQuery } from './payment-input.ts';

// The evidence, the answer shapes and terms_match live beside these rules; their importers keep reaching them here.
export type * from './_payment-evidence.ts';
export * from './_payment-status-answer.ts';
export {
  type ExpectedTerms,
  expectedTermsFromChallenge,
  type Match,
  type TermsMatch,
} from './_payment-terms-match.ts';

/** docs/api.md §3.2 and §8. */
export const MIN_CONFIRMATIONS = 10;
/** docs/api.md §3.2: seconds chain time must be past `validBefore` before re-signing is safe. */
export const RESIGN_MARGIN_S = 120;

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
    // docs/api.md §3.2: the one case; classify() only reaches it with two agreeing sources past validBefore + 120 s.
    safe_to_resign: reason === 'expired_unused',
    why:
      paymentStatusReasonText(reason) +
      (reason === 'settled_onchain' && receipt ? ` Transaction ${receipt.txHash}.` : ''),
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
  // docs/api.md §3.2: "past validBefore plus 120 seconds"; at exactly that second it is not yet past.
  if (BigInt(chainTime) <= deadline(validBefore)) return out('unused_not_expired', unused);
  if (new Set(unused.map((source) => source.name)).size < 2) return out('single_source', unused);
  return out('expired_unused', unused);
}

function deadline(validBefore: bigint): bigint {
  return validBefore + BigInt(RESIGN_MARGIN_S);
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
    // docs/api.md §4 trusts a bare valid_before; only the signed payload proves it.
    ...(validBeforeFromCaller ? ['whether the valid_before you sent is the one the payer signed'] : []),
  ];
}

function minOf(values: (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : Math.min(...known);
}

/** ISO 8601 of unix seconds; null past what a Date can hold (a payload may carry validBefore = 2^256 - 1). */
export function isoSeconds(seconds: bigint): string | null {
  return seconds >= 0n && seconds <= 8_640_000_000_000n
    ? new Date(Number(seconds) * 1000).toISOString()
    : null;
}
