/**
 * The payment status answer (docs/api.md §2.7): the statuses, the machine reasons with the status each gives and their
 * plain words, and the shape of the result. Internal to `core/payment-status.ts`.
 */
import type { TermsMatch } from './_payment-terms-match.ts';
import type { Hex } from './payment-input.ts';

/** The statuses of docs/api.md §2.7. */
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
/** One of the machine reasons of {@link PAYMENT_STATUS_REASONS}. */
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
