/**
 * Spotcheck's own x402 seller for h3 v2 (spec §4, §5.2–5.3, §7): the SDK ships Hono/Express/Next adapters,
 * not h3, so this wraps `x402ResourceServer` around any handler that has a web `Request` (`event.req`).
 *
 * Flow of {@link Seller.sell} (x402-notes §4.3, "authorization" payment flow):
 * 1. No `PAYMENT-SIGNATURE`/`X-PAYMENT` header → 402. Undecodable header → 402 `invalid_payment_header`.
 * 2. The same payment already in flight, or already settled → 402 at once (`_replay.ts`).
 * 3. Facilitator verify: invalid → 402 with its `invalidReason`; error or timeout → 502 `facilitator_unavailable`.
 * 4. The handler runs (it checks its own parameters now, spec §4: "checked after the 402 and before anything is
 *    settled"). Status ≥ 400 → returned as is, nothing settled. Throw → 500, nothing settled.
 * 5. Settle: success → the handler's answer + `PAYMENT-RESPONSE` + `Cache-Control: private`. Failure,
 *    including `settlement_pending` → 402 + `PAYMENT-RESPONSE` (success:false) and no paid body: a paid answer
 *    only ever follows a settlement that landed. Error or timeout → 502 (outcome unknown; the buyer should ask
 *    payment-status before signing again).
 *
 * Body carrying the transaction: the handler runs before settlement, so it returns {@link paidJson} with a
 * render function; the seller calls it with the {@link Settlement} once the transaction has landed.
 *
 * HEAD: h3 v2 routes HEAD to the GET handler, so `sell` treats HEAD exactly like the offer's method (402 unless
 * paid). Route HEAD of a paid path to the same guarded handler, or answer 405; never to an unguarded one.
 */
import { x402ResourceServer } from '@x402/core/server';
import { SettleError, type SettleResponse, VerifyError, type VerifyResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { BASE, canonicalUsdc, evmChainId } from '../../core/networks.ts';
import { buildChallenge, type Challenge, paymentRequiredOf, type Terms } from './_challenge.ts';
import { createV1Support, type Driver, v1Driver, v2Driver } from './_drivers.ts';
import { decodePaymentHeader } from './_payment-header.ts';
import { createReplayGuard, type ReplayRefusal } from './_replay.ts';
import {
  atomicToUsdText,
  challengeResponse,
  errorResponse,
  paidResponse,
  settlementHeaders,
} from './_responses.ts';
import type { Offer, PaidHandler, PaidJson, Seller, SellerConfig, Settlement } from './_types.ts';

export { X402_CORS } from './_responses.ts';
export type * from './_types.ts';

/** A success answer whose JSON body is rendered with the landed {@link Settlement} (e.g. `access.tx`).
 *  `status` must be below 400: error answers are plain `Response`s (a PaidJson with an error status is a bug and
 *  answers 500, unsettled). */
export function paidJson(
  render: (settlement: Settlement) => unknown,
  init: { status?: number; headers?: Record<string, string> } = {},
): PaidJson {
  return { kind: 'paid-json', status: init.status ?? 200, headers: init.headers ?? {}, render };
}

/** The `access` block of a paid answer (spec §2.1): `{ tier: 'paid', charged_usd, tx }`. */
export function paidAccess(settlement: Settlement): { tier: 'paid'; charged_usd: string; tx: string } {
  return { tier: 'paid', charged_usd: settlement.chargedUsd, tx: settlement.tx };
}

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
  const guard = createReplayGuard(config.now ?? (() => new Date()));
  const verifyTimeoutMs = config.verifyTimeoutMs ?? 15_000;
  const unavailable = (stage: 'verify' | 'settle', error: unknown) => {
    config.onError?.(stage, error);
    return facilitatorUnavailable(stage);
  };

  const refuse = async (challenge: Challenge, error: string, headers?: Record<string, string>) =>
    challengeResponse(await paymentRequiredOf(server, challenge, error), headers);

  async function run(challenge: Challenge, driver: Driver, from: string | null, handler: PaidHandler) {
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

    const payer = verified.payer ?? from ?? '';
    let answer: Awaited<ReturnType<PaidHandler>>;
    try {
      answer = await handler({
        payer,
        network: driver.network,
        amountAtomic: driver.amountAtomic,
        x402Version: driver.x402Version,
      });
    } catch (error) {
      config.onError?.('handler', error);
      return { response: errorResponse(500, 'internal_error', 'The request failed; nothing was charged.') };
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

    let result: SettleResponse;
    try {
      result = await driver.settle();
    } catch (error) {
      if (!(error instanceof SettleError))
        return { response: unavailable('settle', error), settled: 'unknown' as const };
      result = {
        success: false,
        errorReason: error.errorReason ?? error.message,
        transaction: error.transaction ?? '',
        network: error.network ?? driver.network,
        ...(error.errorMessage === undefined ? {} : { errorMessage: error.errorMessage }),
        ...(error.payer === undefined ? {} : { payer: error.payer }),
      };
    }
    const headers = settlementHeaders(result, driver.x402Version);
    if (!result.success || result.transaction === '') {
      const reason = result.success ? 'settlement_failed' : (result.errorReason ?? 'settlement_failed');
      const broadcast = reason === 'settlement_pending' || result.transaction !== '';
      return {
        response: await refuse(challenge, reason, headers),
        settled: broadcast ? ('pending' as const) : undefined,
      };
    }
    const settlement: Settlement = {
      tx: result.transaction,
      payer: result.payer ?? payer,
      network: result.network,
      amountAtomic: result.amount ?? driver.amountAtomic,
      chargedUsd: atomicToUsdText(result.amount ?? driver.amountAtomic),
    };
    return { response: paidResponse(answer, settlement, headers), settled: 'landed' as const };
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

      const refusal = guard.claim(decoded.key);
      if (refusal !== null) return refuse(challenge, refusal);
      let settled: 'landed' | 'pending' | 'unknown' | undefined;
      try {
        const driver =
          decoded.version === 2
            ? v2Driver(server, challenge, decoded.payload)
            : v1Driver(config.facilitator, supportsV1, challenge, decoded.payload, v1Network);
        const outcome = await run(challenge, driver, decoded.from, handler);
        settled = outcome.settled;
        return outcome.response;
      } finally {
        const reason: ReplayRefusal = settled === 'landed' ? 'payment_already_used' : 'settlement_pending';
        const hold = settled
          ? { validBefore: decoded.validBefore, reason, fallbackSeconds: terms.maxTimeoutSeconds }
          : null;
        guard.release(decoded.key, hold);
      }
    },
  };
}

function facilitatorUnavailable(stage: 'verify' | 'settle'): Response {
  const message =
    stage === 'verify'
      ? 'The payment facilitator did not answer; nothing was settled. Retry with the same payment.'
      : 'The payment facilitator did not confirm settlement; check the payment status before signing a new payment.';
  return errorResponse(502, 'facilitator_unavailable', message);
}

/** Rejects when `promise` has not settled within `ms`; the timer never keeps the process alive. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`facilitator verify timed out after ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The v1 network name (`base`) of a CAIP-2 EVM network, for v1 payloads; null when v1 has no name for it. */
function v1NameOf(network: string): string | null {
  const id = evmChainId(network);
  const entry = Object.entries(EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>).find(
    ([, chain]) => chain === id,
  );
  return entry ? entry[0] : null;
}
