/**
 * The steps of one paid request after its payment header decoded (`seller.ts` steps 3-5): verify, run the handler,
 * settle and deliver. Each step is a function over the seller's {@link SellerContext} and ends the flow with an
 * {@link Outcome} when it refuses.
 */
import type { x402ResourceServer } from '@x402/core/server';
import { SettleError, type SettleResponse, VerifyError, type VerifyResponse } from '@x402/core/types';
import type { ExactEvmScheme } from '@x402/evm/exact/server';
import type { ReplayGuard } from '../../io/replay/port.ts';
import { databaseUnavailable, errorResponse } from '../errors.ts';
import { type OfferQuote, paymentRequiredOf, type Terms } from './_challenge.ts';
import { type Driver, withTimeout } from './_drivers.ts';
import type { DecodedPayment } from './_payment-header.ts';
import {
  challengeResponse,
  deliveryFailed,
  facilitatorUnavailable,
  paidResponse,
  settlementHeaders,
  settlementUnverified,
} from './_responses.ts';
import { readSettlement, settleErrorResult } from './_settlement.ts';
import type { PaidAnswer, PaidHandler, SellerConfig } from './_types.ts';

/**
 * Seconds an authorization must outlive the paid handler: verify is done by then, and settlement still needs the
 * facilitator's own checks (the SDK refuses under 6 s left), a broadcast, inclusion in a block, and possibly the one
 * `settlement_pending` retry. The official client signs for `maxTimeoutSeconds` (300), far above this.
 */
export const SETTLE_MARGIN_SECONDS = 30;

/** What every request of one seller shares: its configuration, resolved, and the SDK's server. */
export type SellerContext = {
  readonly config: SellerConfig;
  readonly terms: Terms;
  readonly scheme: ExactEvmScheme;
  readonly server: x402ResourceServer;
  readonly v1Network: string | null;
  readonly supportsV1: () => Promise<boolean>;
  readonly now: () => Date;
  readonly guard: ReplayGuard;
  readonly verifyTimeoutMs: number;
  readonly handlerBudgetSeconds: number;
};

/** How a paid request ended: its answer, and whether a settlement landed, may land, or is not known. */
export type Outcome = { response: Response; settled?: 'landed' | 'pending' | 'unknown' };

/** The 402 of `quote`, naming why (`error`). */
export async function refuse(
  ctx: SellerContext,
  quote: OfferQuote,
  error: string,
  headers?: Record<string, string>,
): Promise<Response> {
  return challengeResponse(await paymentRequiredOf(ctx.server, quote, error), headers);
}

/** The 502 of a facilitator that failed or did not answer, reported to `onError`. */
function unavailable(ctx: SellerContext, stage: 'verify' | 'settle', error: unknown): Response {
  ctx.config.onError?.(stage, error);
  return facilitatorUnavailable(stage);
}

/** True when the authorization could expire before a settlement after the handler lands. */
function expiresTooSoon(ctx: SellerContext, validBefore: number | null): boolean {
  const at = Math.floor(ctx.now().getTime() / 1000);
  return validBefore === null || validBefore < at + ctx.handlerBudgetSeconds + SETTLE_MARGIN_SECONDS;
}

/** Verifies, runs the handler, then settles and delivers: the outcome of one paid request. */
export async function runPaid(
  ctx: SellerContext,
  quote: OfferQuote,
  driver: Driver,
  decoded: DecodedPayment,
  handler: PaidHandler,
): Promise<Outcome> {
  const verified = await verifyPayment(ctx, quote, driver, decoded);
  if ('response' in verified) return verified;
  const ran = await runHandler(ctx, driver, decoded, verified.payer, handler);
  if (!('answer' in ran)) return ran;
  return settleAndDeliver(ctx, quote, driver, ran.answer, verified.payer);
}

/** Matching, facilitator verify and the expiry rule: the payer, or the answer that ends the flow. */
async function verifyPayment(
  ctx: SellerContext,
  quote: OfferQuote,
  driver: Driver,
  decoded: DecodedPayment,
): Promise<{ payer: string } | Outcome> {
  try {
    const mismatch = await driver.prepare();
    if (mismatch !== null) return { response: await refuse(ctx, quote, mismatch) };
  } catch (error) {
    return { response: unavailable(ctx, 'verify', error) };
  }
  let verified: VerifyResponse;
  try {
    verified = await withTimeout(driver.verify(), ctx.verifyTimeoutMs);
  } catch (error) {
    if (!(error instanceof VerifyError)) return { response: unavailable(ctx, 'verify', error) };
    verified = { isValid: false, invalidReason: error.invalidReason ?? error.message };
  }
  if (!verified.isValid)
    return { response: await refuse(ctx, quote, verified.invalidReason ?? 'invalid_payment') };
  if (expiresTooSoon(ctx, decoded.validBefore))
    return { response: await refuse(ctx, quote, 'authorization_expires_too_soon') };
  return { payer: verified.payer ?? decoded.from ?? '' };
}

/** The handler's answer to settle, or the outcome that ends the flow unsettled (a throw, an error status). */
async function runHandler(
  ctx: SellerContext,
  driver: Driver,
  decoded: DecodedPayment,
  payer: string,
  handler: PaidHandler,
): Promise<{ answer: PaidAnswer } | Outcome> {
  let answer: PaidAnswer;
  try {
    answer = await handler({
      payer,
      network: driver.network,
      amountAtomic: driver.amountAtomic,
      x402Version: driver.x402Version,
      validBefore: decoded.validBefore,
      nonce: decoded.nonce,
    });
  } catch (error) {
    ctx.config.onError?.('handler', error);
    const response =
      databaseUnavailable(error) ??
      errorResponse(500, 'internal_error', 'The request failed; nothing was charged.');
    return { response };
  }
  if (answer.status >= 400) {
    // An error answer is never settled; a PaidJson cannot be rendered without a settlement.
    return {
      response:
        answer instanceof Response
          ? answer
          : errorResponse(500, 'internal_error', 'The request failed; nothing was charged.'),
    };
  }
  return { answer };
}

/** Settles, and completes the answer only on a settlement that landed and matches the payment. */
async function settleAndDeliver(
  ctx: SellerContext,
  quote: OfferQuote,
  driver: Driver,
  answer: PaidAnswer,
  payer: string,
): Promise<Outcome> {
  const { onError } = ctx.config;
  let result: SettleResponse;
  try {
    result = await driver.settle();
  } catch (error) {
    if (!(error instanceof SettleError))
      return { response: unavailable(ctx, 'settle', error), settled: 'unknown' };
    result = settleErrorResult(error, driver.wireNetwork);
  }
  const reading = readSettlement(result, {
    network: driver.wireNetwork,
    amountAtomic: driver.amountAtomic,
    payer,
  });
  if (reading.kind === 'unverified') {
    onError?.('settle', new Error(`settlement not accepted: ${reading.problem}`));
    return { response: settlementUnverified(), settled: 'unknown' };
  }
  const headers = settlementHeaders(result, driver.x402Version);
  if (reading.kind === 'failed') {
    const response = await refuse(ctx, quote, reading.reason, headers);
    if (reading.broadcast) return { response, settled: 'pending' };
    if (!(answer instanceof Response))
      await answer.release?.().catch((error: unknown) => onError?.('handler', error));
    return { response };
  }
  try {
    // Rendering completes the handler's durable work (its receipt), so nothing of it exists before this line.
    return { response: await paidResponse(answer, reading.settlement, headers), settled: 'landed' };
  } catch (error) {
    onError?.('handler', error);
    return { response: deliveryFailed(reading.settlement.tx, headers), settled: 'landed' };
  }
}
