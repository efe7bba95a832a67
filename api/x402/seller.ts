/**
 * Spotcheck's own x402 seller for h3 v2 (spec §4, §5.2–5.3, §7): the SDK ships Hono/Express/Next adapters,
 * not h3, so this wraps `x402ResourceServer` around any handler that has a web `Request` (`event.req`).
 *
 * Flow of {@link Seller.sell} (x402-notes §4.3, "authorization" payment flow):
 * 1. No `PAYMENT-SIGNATURE`/`X-PAYMENT` header → 402. Undecodable header → 402 `invalid_payment_header`.
 * 2. The same payment already in flight, or already settled → 402 at once (`_replay.ts`).
 * 3. Facilitator verify: invalid → 402 with its `invalidReason`; error or timeout → 502 `facilitator_unavailable`.
 *    An authorization whose `validBefore` is less than the handler budget plus {@link SETTLE_MARGIN_SECONDS} away →
 *    402 `authorization_expires_too_soon`: it could expire before its settlement lands.
 * 4. The handler runs (it checks its own parameters now, spec §4: "checked after the 402 and before anything is
 *    settled"). Status ≥ 400 → returned as is, nothing settled. Throw → 500, nothing settled (503
 *    `database_unavailable` when the shared database did not answer).
 * 5. Settle: success that matches the payment (`_settlement.ts`: a 32-byte transaction hash, the requirement's
 *    network and price, the verified payer) → the handler's answer + `PAYMENT-RESPONSE` + `Cache-Control: private`.
 *    Failure, including `settlement_pending` → 402 + `PAYMENT-RESPONSE` (success:false) and no paid body: a paid
 *    answer only ever follows a settlement that landed. A failure before anything was broadcast calls the answer's
 *    `release` (what the handler took for this payment, e.g. an invoice's claim, goes back). Error or timeout → 502 `facilitator_unavailable`; a success
 *    that does not match → 502 `settlement_unverified` (both: outcome unknown, the payment key stays held; the buyer
 *    should ask payment-status before signing again).
 *
 * Body carrying the transaction: the handler runs before settlement, so it returns {@link paidJson} with a
 * render function; the seller calls (and awaits) it with the {@link Settlement} once the transaction has landed.
 * A handler defers everything public or durable (its receipt, its observation) to that render: nothing derived from
 * a call whose settlement did not land is ever written.
 *
 * HEAD: h3 v2 routes HEAD to the GET handler, so `sell` treats HEAD exactly like the offer's method (402 unless
 * paid). Route HEAD of a paid path to the same guarded handler, or answer 405; never to an unguarded one.
 */
import { x402ResourceServer } from '@x402/core/server';
import { SettleError, type SettleResponse, VerifyError, type VerifyResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { BASE, canonicalUsdc } from '../../core/networks.ts';
import { databaseUnavailable } from '../errors.ts';
import { buildChallenge, type Challenge, paymentRequiredOf, type Terms } from './_challenge.ts';
import { createV1Support, type Driver, v1Driver, v1NameOf, v2Driver, withTimeout } from './_drivers.ts';
import { type DecodedPayment, decodePaymentHeader } from './_payment-header.ts';
import { createReplayGuard, type ReplayRefusal } from './_replay.ts';
import {
  challengeResponse,
  deliveryFailed,
  errorResponse,
  facilitatorUnavailable,
  paidResponse,
  settlementHeaders,
  settlementUnverified,
} from './_responses.ts';
import { readSettlement, settleErrorResult } from './_settlement.ts';
import type { Offer, PaidHandler, PaidJson, Seller, SellerConfig, Settlement } from './_types.ts';

export { X402_CORS } from './_responses.ts';
export type * from './_types.ts';

/** A success answer whose JSON body is rendered with the landed {@link Settlement} (e.g. `access.tx`).
 *  `status` must be below 400: error answers are plain `Response`s (a PaidJson with an error status is a bug and
 *  answers 500, unsettled). */
export function paidJson(
  render: (settlement: Settlement) => unknown | Promise<unknown>,
  init: { status?: number; headers?: Record<string, string>; release?: () => Promise<void> } = {},
): PaidJson {
  return {
    kind: 'paid-json',
    status: init.status ?? 200,
    headers: init.headers ?? {},
    render,
    ...(init.release ? { release: init.release } : {}),
  };
}

/** The `access` block of a paid answer (spec §2.1): `{ tier: 'paid', charged_usd, tx }`. */
export function paidAccess(settlement: Settlement): { tier: 'paid'; charged_usd: string; tx: string } {
  return { tier: 'paid', charged_usd: settlement.chargedUsd, tx: settlement.tx };
}

/**
 * Seconds an authorization must outlive the paid handler: verify is done by then, and settlement still needs the
 * facilitator's own checks (the SDK refuses under 6 s left), a broadcast, inclusion in a block, and possibly the one
 * `settlement_pending` retry. The official client signs for `maxTimeoutSeconds` (300), far above this.
 */
export const SETTLE_MARGIN_SECONDS = 30;

/** Creates the seller. No facilitator call happens here: a 402 is producible with the facilitator down. */
export function createSeller(config: SellerConfig): Seller {
  const network = config.network ?? BASE;
  const usdc = canonicalUsdc(network);
  if (!usdc) throw new RangeError(`x402 seller: no canonical USDC on ${network}`);
  const terms: Terms = {
    network,
    asset: usdc.asset,
    name: usdc.name,
    version: usdc.version,
    payTo: config.payTo,
    maxTimeoutSeconds: config.maxTimeoutSeconds ?? 300,
  };
  const scheme = new ExactEvmScheme();
  // Without the bazaar extension the declaration would lack the route's `method` (x402-notes §9 item 21).
  const server = new x402ResourceServer(config.facilitator)
    .register(network, scheme)
    .registerExtension(bazaarResourceServerExtension);
  const v1Network = v1NameOf(network);
  const supportsV1 = createV1Support(config.facilitator, v1Network);
  const now = config.now ?? (() => new Date());
  const guard = config.replayGuard ?? createReplayGuard(now);
  const verifyTimeoutMs = config.verifyTimeoutMs ?? 15_000;
  const handlerBudgetSeconds = config.handlerBudgetSeconds ?? 0;
  const unavailable = (stage: 'verify' | 'settle', error: unknown) => {
    config.onError?.(stage, error);
    return facilitatorUnavailable(stage);
  };

  const refuse = async (challenge: Challenge, error: string, headers?: Record<string, string>) =>
    challengeResponse(await paymentRequiredOf(server, challenge, error), headers);

  /** True when the authorization could expire before a settlement after the handler lands. */
  const expiresTooSoon = (validBefore: number | null): boolean => {
    const at = Math.floor(now().getTime() / 1000);
    return validBefore === null || validBefore < at + handlerBudgetSeconds + SETTLE_MARGIN_SECONDS;
  };

  type Outcome = { response: Response; settled?: 'landed' | 'pending' | 'unknown' };

  /** Matching, facilitator verify and the expiry rule: the payer, or the answer that ends the flow. */
  async function verifyPayment(
    challenge: Challenge,
    driver: Driver,
    decoded: DecodedPayment,
  ): Promise<{ payer: string } | Outcome> {
    try {
      const mismatch = await driver.prepare();
      if (mismatch !== null) return { response: await refuse(challenge, mismatch) };
    } catch (error) {
      return { response: unavailable('verify', error) };
    }
    let verified: VerifyResponse;
    try {
      verified = await withTimeout(driver.verify(), verifyTimeoutMs);
    } catch (error) {
      if (!(error instanceof VerifyError)) return { response: unavailable('verify', error) };
      verified = { isValid: false, invalidReason: error.invalidReason ?? error.message };
    }
    if (!verified.isValid)
      return { response: await refuse(challenge, verified.invalidReason ?? 'invalid_payment') };
    if (expiresTooSoon(decoded.validBefore))
      return { response: await refuse(challenge, 'authorization_expires_too_soon') };
    return { payer: verified.payer ?? decoded.from ?? '' };
  }

  async function run(challenge: Challenge, driver: Driver, decoded: DecodedPayment, handler: PaidHandler) {
    const verified = await verifyPayment(challenge, driver, decoded);
    if ('response' in verified) return verified;
    const { payer } = verified;
    let answer: Awaited<ReturnType<PaidHandler>>;
    try {
      answer = await handler({
        payer,
        network: driver.network,
        amountAtomic: driver.amountAtomic,
        x402Version: driver.x402Version,
        validBefore: decoded.validBefore,
      });
    } catch (error) {
      config.onError?.('handler', error);
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
    return settleAndDeliver(challenge, driver, answer, payer);
  }

  /** Settles, and completes the answer only on a settlement that landed and matches the payment. */
  async function settleAndDeliver(
    challenge: Challenge,
    driver: Driver,
    answer: Awaited<ReturnType<PaidHandler>>,
    payer: string,
  ): Promise<Outcome> {
    let result: SettleResponse;
    try {
      result = await driver.settle();
    } catch (error) {
      if (!(error instanceof SettleError))
        return { response: unavailable('settle', error), settled: 'unknown' };
      result = settleErrorResult(error, driver.wireNetwork);
    }
    const reading = readSettlement(result, {
      network: driver.wireNetwork,
      amountAtomic: driver.amountAtomic,
      payer,
    });
    if (reading.kind === 'unverified') {
      config.onError?.('settle', new Error(`settlement not accepted: ${reading.problem}`));
      return { response: settlementUnverified(), settled: 'unknown' };
    }
    const headers = settlementHeaders(result, driver.x402Version);
    if (reading.kind === 'failed') {
      const response = await refuse(challenge, reading.reason, headers);
      if (reading.broadcast) return { response, settled: 'pending' };
      if (!(answer instanceof Response))
        await answer.release?.().catch((error: unknown) => config.onError?.('handler', error));
      return { response };
    }
    try {
      // Rendering completes the handler's durable work (its receipt), so nothing of it exists before this line.
      return { response: await paidResponse(answer, reading.settlement, headers), settled: 'landed' };
    } catch (error) {
      config.onError?.('handler', error);
      return { response: deliveryFailed(reading.settlement.tx, headers), settled: 'landed' };
    }
  }

  return {
    async paymentRequired(offer: Offer, options = {}) {
      const challenge = await buildChallenge(server, scheme, terms, offer, null);
      return refuse(challenge, options.error ?? 'Payment required', options.headers);
    },

    async sell(event, offer, handler) {
      const request = event.req;
      const challenge = await buildChallenge(server, scheme, terms, offer, request);
      // Spec §5.2: both headers are read; the payload's own x402Version decides how it is handled.
      const header = request.headers.get('payment-signature') ?? request.headers.get('x-payment');
      if (header === null) return refuse(challenge, 'Payment required');
      const decoded = decodePaymentHeader(header);
      if (!decoded) return refuse(challenge, 'invalid_payment_header');

      const replayWindow = { validBefore: decoded.validBefore, fallbackSeconds: terms.maxTimeoutSeconds };
      const refusal = await guard.claim(decoded.key, replayWindow);
      if (refusal !== null) return refuse(challenge, refusal);
      let settled: 'landed' | 'pending' | 'unknown' | undefined;
      try {
        const driver =
          decoded.version === 2
            ? v2Driver(server, challenge, decoded.payload)
            : v1Driver(config.facilitator, supportsV1, challenge, decoded.payload, v1Network);
        const outcome = await run(challenge, driver, decoded, handler);
        settled = outcome.settled;
        return outcome.response;
      } finally {
        const reason: ReplayRefusal = settled === 'landed' ? 'payment_already_used' : 'settlement_pending';
        // A guard that cannot record the end of the flight leaves the claim to expire with its window.
        await guard
          .release(decoded.key, settled ? { ...replayWindow, reason } : null)
          .catch((error: unknown) => config.onError?.('replay', error));
      }
    },
  };
}
