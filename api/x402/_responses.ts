/**
 * The HTTP answers of the seller: the 402 challenge, the JSON error answers, and the paid answer.
 */
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { withPrivateCacheControl } from '@x402/core/server';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { errorResponse } from '../errors.ts';
import type { PaidAnswer, Settlement } from './_types.ts';

/**
 * CORS header lists for x402 routes (docs/x402.md §9.16): browsers can read the payment headers only if they
 * are exposed, and a preflight must allow the buyer's payment headers. The seller sets the expose list on its
 * own answers; the app's lists (`api/app.ts`) start from both.
 */
export const X402_CORS = {
  exposeHeaders: ['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE'],
  allowHeaders: ['content-type', 'authorization', 'payment-signature', 'x-payment'],
} as const;

const EXPOSE = X402_CORS.exposeHeaders.join(', ');

/** A 402 carrying the v2 PaymentRequired in the header and, identically, as the JSON body (docs/api.md §5.2). */
export function challengeResponse(
  paymentRequired: PaymentRequired,
  headers: Record<string, string> = {},
): Response {
  const out = new Headers({
    'Content-Type': 'application/json',
    'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired),
    // docs/x402.md §9.17: a cached 402 would replay a stale challenge.
    'Cache-Control': 'no-store',
    'Access-Control-Expose-Headers': EXPOSE,
  });
  for (const [name, value] of Object.entries(headers)) out.set(name, value);
  return new Response(JSON.stringify(paymentRequired), { status: 402, headers: out });
}

/** 502 when the facilitator did not answer (`verify`: nothing settled) or did not confirm a settlement (`settle`). */
export function facilitatorUnavailable(stage: 'verify' | 'settle'): Response {
  const message =
    stage === 'verify'
      ? 'The payment facilitator did not answer; nothing was settled. Retry with the same payment.'
      : 'The payment facilitator did not confirm settlement; check the payment status before signing a new payment.';
  return errorResponse(502, 'facilitator_unavailable', message);
}

/** 502 when the facilitator claimed a settlement that does not describe this payment: its outcome is unknown. */
export function settlementUnverified(): Response {
  return errorResponse(
    502,
    'settlement_unverified',
    'The payment facilitator reported a settlement that does not match this payment; nothing was delivered. Check the payment status before signing a new payment.',
  );
}

/** 500 after a landed settlement whose answer could not be made durable: the buyer learns the transaction. */
export function deliveryFailed(tx: string, headers: Record<string, string>): Response {
  const response = errorResponse(
    500,
    'internal_error',
    `The payment settled (transaction ${tx}) but the answer could not be recorded; nothing about it was published.`,
  );
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  response.headers.set('Access-Control-Expose-Headers', EXPOSE);
  return response;
}

/** Settlement-response headers: `PAYMENT-RESPONSE` always, plus `X-PAYMENT-RESPONSE` for a v1 payment. */
export function settlementHeaders(result: SettleResponse, x402Version: 1 | 2): Record<string, string> {
  const encoded = encodePaymentResponseHeader(result);
  return x402Version === 1
    ? { 'PAYMENT-RESPONSE': encoded, 'X-PAYMENT-RESPONSE': encoded }
    : { 'PAYMENT-RESPONSE': encoded };
}

/** The handler's answer after a landed settlement: its body (rendered now for a PaidJson, which may first make its
 *  receipt durable) plus the settlement headers. Rejects when the render does. */
export async function paidResponse(
  answer: PaidAnswer,
  settlement: Settlement,
  headers: Record<string, string>,
): Promise<Response> {
  let out: Response;
  if (answer instanceof Response) {
    // A Response's body is already final: re-wrap it so its headers become mutable.
    out = new Response(answer.body, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
  } else {
    out = new Response(JSON.stringify(await answer.render(settlement)), {
      status: answer.status,
      headers: { 'Content-Type': 'application/json', ...answer.headers },
    });
  }
  for (const [name, value] of Object.entries(headers)) out.headers.set(name, value);
  // A paid answer is one buyer's receipt; shared caches must not keep it (docs/x402.md §2.1), and no cache at all
  // unless the handler says otherwise: like every answer made for one caller (`noStore` in `api/access.ts`).
  out.headers.set(
    'Cache-Control',
    withPrivateCacheControl(out.headers.get('Cache-Control') ?? 'private, no-store'),
  );
  out.headers.set('Access-Control-Expose-Headers', EXPOSE);
  return out;
}
