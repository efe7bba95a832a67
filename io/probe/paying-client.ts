/**
 * The service's own paying client for known-answer calls (docs/api.md §1.4): the official x402 client
 * (`@x402/fetch` `wrapFetchWithPayment` over an `x402Client` with the `@x402/evm` exact scheme) from the wallet in
 * `PAYER_KEY_FILE`, held to two rules before anything is signed:
 * - it pays only the terms the check approved (network, asset, amount, wallet), never another option of the 402;
 * - the budget: a payment that would exceed what is left of `--budget-usd` is refused before signing, and said so.
 * Every signed payment counts against the budget, settled or not: a signed authorization can still be settled later.
 */
import { x402Client } from '@x402/core/client';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import type { LocalAccount } from 'viem/accounts';
import { type Budget, commitSpend, decideSpend } from '../../core/budget.ts';
import { MAX_ANSWER_BYTES } from '../../core/known-answer.ts';
import { sameAddress } from '../../core/networks.ts';
import { readBoundedText } from './bounded-body.ts';

/** The one payment the check approved (its `payment` object, docs/api.md §2.2). */
export type ApprovedTerms = { network: string; asset: string; amount_atomic: string; pay_to: string };

/** What a known-answer call sends. */
export type PaidRequest = { url: string; method: 'GET' | 'POST'; body?: unknown };

/** A call that paid nothing. */
export type UnpaidCall = {
  kind: 'not_paid';
  /** `budget`: refused before signing; `terms_changed`: the 402 no longer offered the approved terms;
   * `no_payment_asked`: the seller answered without a 402; `failed`: the request failed before any signature. */
  why: 'budget' | 'terms_changed' | 'no_payment_asked' | 'failed';
  message: string;
};

/** A call for which a payment was signed and sent. */
export type PaidCall = {
  kind: 'paid';
  terms: ApprovedTerms;
  payer: string;
  nonce: string;
  /** Status of the paid answer; null when none came (timeout, reset). */
  status: number | null;
  text: string;
  truncated: boolean;
  /** From the seller's `PAYMENT-RESPONSE`; null when it named no successful settlement. */
  settlement_tx: string | null;
  error: string | null;
};

export type PayingClientOptions = {
  account: LocalAccount;
  budget: Budget;
  fetch?: typeof fetch;
  /** Per request (the unpaid one and the paid one), ms. Default 15000. */
  timeoutMs?: number;
};

export type PayingClient = {
  pay(request: PaidRequest, approved: ApprovedTerms): Promise<PaidCall | UnpaidCall>;
  budget(): Budget;
};

/** Creates the paying client; calls are meant to be made one at a time (the budget is read, then committed). */
export function createPayingClient(options: PayingClientOptions): PayingClient {
  let budget = options.budget;
  const baseFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 15_000;

  async function pay(request: PaidRequest, approved: ApprovedTerms): Promise<PaidCall | UnpaidCall> {
    // Set from the client's hooks (closures TypeScript does not follow, hence a holder object).
    const seen: {
      refusal: string | null;
      unapproved: boolean;
      signed: { nonce: string; payer: string } | null;
    } = { refusal: null, unapproved: false, signed: null };
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(options.account))
      // Spend caps are ours (the budget); the SDK's default $1 cap would refuse an approved payment silently.
      .setSpendControls(false)
      .registerPolicy((_version, offered) => {
        const approvedOnly = offered.filter((offer) => matches(offer, approved));
        seen.unapproved = approvedOnly.length === 0;
        return approvedOnly;
      })
      .onBeforePaymentCreation(async ({ selectedRequirements }) => {
        const decision = decideSpend(budget, selectedRequirements.network, selectedRequirements.amount);
        if (!decision.ok) {
          seen.refusal = decision.message;
          return { abort: true, reason: decision.message };
        }
        budget = commitSpend(budget, decision.cost);
        return undefined;
      })
      .onAfterPaymentCreation(async ({ paymentPayload }) => {
        const authorization = (
          paymentPayload.payload as { authorization?: { nonce?: unknown; from?: unknown } }
        ).authorization;
        seen.signed = { nonce: String(authorization?.nonce ?? ''), payer: String(authorization?.from ?? '') };
      });
    const payingFetch = wrapFetchWithPayment(
      (input, init) => baseFetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
      client,
    );
    let response: Response;
    try {
      response = await payingFetch(request.url, init(request));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (seen.refusal !== null) return { kind: 'not_paid', why: 'budget', message: seen.refusal };
      const signed = seen.signed;
      if (signed === null) {
        return seen.unapproved
          ? { kind: 'not_paid', why: 'terms_changed', message: 'the 402 no longer offers the approved terms' }
          : { kind: 'not_paid', why: 'failed', message };
      }
      return paidCall(approved, signed, null, { text: '', truncated: false }, null, message);
    }
    const signed = seen.signed;
    if (signed === null) {
      await response.body?.cancel();
      return {
        kind: 'not_paid',
        why: 'no_payment_asked',
        message: `the seller answered ${response.status} without asking for payment`,
      };
    }
    const body = await readBoundedText(response.body, MAX_ANSWER_BYTES).catch((error: unknown) => ({
      text: '',
      truncated: false,
      error: error instanceof Error ? error.message : String(error),
    }));
    const settled = settlementOf(response.headers.get('PAYMENT-RESPONSE'));
    return paidCall(approved, signed, response.status, body, settled, 'error' in body ? body.error : null);
  }

  return { pay, budget: () => budget };
}

function paidCall(
  terms: ApprovedTerms,
  signed: { nonce: string; payer: string },
  status: number | null,
  body: { text: string; truncated: boolean },
  settlementTx: string | null,
  error: string | null,
): PaidCall {
  return {
    kind: 'paid',
    terms,
    payer: signed.payer,
    nonce: signed.nonce,
    status,
    text: body.text,
    truncated: body.truncated,
    settlement_tx: settlementTx,
    error,
  };
}

function init(request: PaidRequest): RequestInit {
  if (request.method === 'GET') return { method: 'GET' };
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request.body ?? {}),
  };
}

function matches(offer: PaymentRequirements, approved: ApprovedTerms): boolean {
  return (
    offer.scheme === 'exact' &&
    offer.network === approved.network &&
    sameAddress(offer.asset, approved.asset) &&
    sameAddress(offer.payTo, approved.pay_to) &&
    offer.amount === approved.amount_atomic
  );
}

/** The settlement transaction a `PAYMENT-RESPONSE` header names, when it reports success with a 32-byte hash. */
function settlementOf(header: string | null): string | null {
  if (header === null) return null;
  try {
    const settled = decodePaymentResponseHeader(header);
    return settled.success && /^0x[0-9a-fA-F]{64}$/.test(settled.transaction) ? settled.transaction : null;
  } catch {
    return null;
  }
}
