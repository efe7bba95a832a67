/**
 * Spotcheck's own x402 seller for h3 v2 (docs/api.md §4, §5.2–5.3, §7): the SDK ships Hono/Express/Next adapters,
 * not h3, so this wraps `x402ResourceServer` around any handler that has a web `Request` (`event.req`).
 *
 * Flow of {@link Seller.sell} (docs/x402.md §4.3, "authorization" payment flow):
 * 1. No `PAYMENT-SIGNATURE`/`X-PAYMENT` header → 402. Undecodable header → 402 `invalid_payment_header`.
 * 2. The same payment already in flight, or already settled → 402 at once (`io/replay/memory.ts`).
 * 3. Facilitator verify: invalid → 402 with its `invalidReason`; error or timeout → 502 `facilitator_unavailable`.
 *    An authorization whose `validBefore` is less than the handler budget plus {@link SETTLE_MARGIN_SECONDS} away →
 *    402 `authorization_expires_too_soon`: it could expire before its settlement lands.
 * 4. The handler runs (it checks its own parameters now, docs/api.md §4: "checked after the 402 and before anything is
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
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { BASE, canonicalUsdc } from '../../core/networks.ts';
import type { ReplayRefusal } from '../../core/replay.ts';
import { createReplayGuard } from '../../io/replay/memory.ts';
import { buildQuote } from './_challenge.ts';
import { createV1Support, v1Driver, v1NameOf, v2Driver } from './_drivers.ts';
import { refuse, runPaid, type SellerContext } from './_paid-flow.ts';
import { decodePaymentHeader } from './_payment-header.ts';
import type {
  Offer,
  PaidHandler,
  PaidJson,
  RequestEvent,
  Seller,
  SellerConfig,
  Settlement,
} from './_types.ts';

export { SETTLE_MARGIN_SECONDS } from './_paid-flow.ts';
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

/** The `access` block of a paid answer (docs/api.md §2.1): `{ tier: 'paid', charged_usd, tx }`. */
export function paidAccess(settlement: Settlement): { tier: 'paid'; charged_usd: string; tx: string } {
  return { tier: 'paid', charged_usd: settlement.chargedUsd, tx: settlement.tx };
}

/** Creates the seller. No facilitator call happens here: a 402 is producible with the facilitator down. */
export function createSeller(config: SellerConfig): Seller {
  const network = config.network ?? BASE;
  const usdc = canonicalUsdc(network);
  if (!usdc) throw new RangeError(`x402 seller: no canonical USDC on ${network}`);
  const scheme = new ExactEvmScheme();
  const v1Network = v1NameOf(network);
  const now = config.now ?? (() => new Date());
  const ctx: SellerContext = {
    config,
    terms: {
      network,
      asset: usdc.asset,
      name: usdc.name,
      version: usdc.version,
      payTo: config.payTo,
      maxTimeoutSeconds: config.maxTimeoutSeconds ?? 300,
    },
    scheme,
    // Without the bazaar extension the declaration would lack the route's `method` (docs/x402.md §9.21).
    server: new x402ResourceServer(config.facilitator)
      .register(network, scheme)
      .registerExtension(bazaarResourceServerExtension),
    v1Network,
    supportsV1: createV1Support(config.facilitator, v1Network),
    now,
    guard: config.replayGuard ?? createReplayGuard(now),
    verifyTimeoutMs: config.verifyTimeoutMs ?? 15_000,
    handlerBudgetSeconds: config.handlerBudgetSeconds ?? 0,
  };
  return {
    async paymentRequired(offer: Offer, options = {}) {
      const quote = await buildQuote(ctx.server, scheme, ctx.terms, offer, null);
      return refuse(ctx, quote, options.error ?? 'Payment required', options.headers);
    },
    sell: (event, offer, handler) => sell(ctx, event, offer, handler),
  };
}

/**
 * Steps 1 and 2 of the flow: the header decoded and the payment claimed against replay, then the paid steps
 * (`_paid-flow.ts`); the claim ends as the settlement did.
 */
async function sell(
  ctx: SellerContext,
  event: RequestEvent,
  offer: Offer,
  handler: PaidHandler,
): Promise<Response> {
  const { config, server, guard, terms } = ctx;
  const request = event.req;
  const quote = await buildQuote(server, ctx.scheme, terms, offer, request);
  // docs/api.md §5.2: both headers are read; the payload's own x402Version decides how it is handled.
  const header = request.headers.get('payment-signature') ?? request.headers.get('x-payment');
  if (header === null) return refuse(ctx, quote, 'Payment required');
  const decoded = decodePaymentHeader(header);
  if (!decoded) return refuse(ctx, quote, 'invalid_payment_header');

  const replayWindow = { validBefore: decoded.validBefore, fallbackSeconds: terms.maxTimeoutSeconds };
  const refusal = await guard.claim(decoded.key, replayWindow);
  if (refusal !== null) return refuse(ctx, quote, refusal);
  let settled: 'landed' | 'pending' | 'unknown' | undefined;
  try {
    const driver =
      decoded.version === 2
        ? v2Driver(server, quote, decoded.payload)
        : v1Driver(config.facilitator, ctx.supportsV1, quote, decoded.payload, ctx.v1Network);
    const outcome = await runPaid(ctx, quote, driver, decoded, handler);
    settled = outcome.settled;
    return outcome.response;
  } finally {
    const reason: ReplayRefusal = settled === 'landed' ? 'payment_already_used' : 'settlement_pending';
    // A guard that cannot record the end of the flight leaves the claim to expire with its window.
    await guard
      .release(decoded.key, settled ? { ...replayWindow, reason } : null)
      .catch((error: unknown) => config.onError?.('replay', error));
  }
}
