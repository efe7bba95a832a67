/**
 * Types of the seller adapter, re-exported by `seller.ts`. Kept apart so the helper modules can share them
 * without importing the flow.
 */
import type { FacilitatorClient } from '@x402/core/server';
import type { declareDiscoveryExtension } from '@x402/extensions/bazaar';

import type { ReplayGuard } from '../../io/replay/port.ts';

/** What the service sells with, wired once in the entry file. */
export type SellerConfig = {
  facilitator: FacilitatorClient;
  /** The service wallet (`SERVICE_WALLET`), the `payTo` of every offer. */
  payTo: `0x${string}`;
  /** docs/api.md §5.3: Base only. */
  network?: 'eip155:8453';
  /** Lifetime the buyer signs for (`validBefore = now + this`); SDK default 300. */
  maxTimeoutSeconds?: number;
  /** The longest a paid handler runs (seconds). A payment whose authorization expires sooner than this plus the
   *  settlement margin after verification is refused (402 `authorization_expires_too_soon`) before the handler runs. */
  handlerBudgetSeconds?: number;
  /** Verify calls slower than this answer 502; settle is never cut short (its outcome would be unknown). */
  verifyTimeoutMs?: number;
  /** Clock for expiring the replay guard; defaults to the system clock. */
  now?: () => Date;
  /** Told about errors the buyer only sees as 500/502 (facilitator failures, handler throws), for logging. */
  onError?: (stage: 'verify' | 'settle' | 'handler' | 'replay', error: unknown) => void;
  /** The replay guard; default in memory (one process). Several instances share one (`io/replay/postgres.ts`). */
  replayGuard?: ReplayGuard;
};

/** One paid route, as data (see `offers.ts`). */
export type Offer = {
  /** Method and path, as the SDK writes routes: `'GET /v1/lookup/paid'`. The method is the one declared to
   *  discovery; HEAD requests are treated as this method's twin. */
  route: string;
  /** Atomic USDC units, decimal digits: `'20000'` is USD 0.02. */
  priceAtomic: string;
  description: string;
  /** Public URL of the resource (`resource.url`); never the internal host behind a proxy. */
  resourceUrl: string;
  mimeType?: string;
  /** The bazaar declaration input; enriched with the route's method at request time. */
  discovery?: Parameters<typeof declareDiscoveryExtension>[0];
};

/** A payment the facilitator found valid, handed to the paid handler before anything is settled. */
export type VerifiedPayment = {
  payer: string;
  network: string;
  amountAtomic: string;
  x402Version: 1 | 2;
  /** The authorization's `validBefore` (epoch seconds), null when the payload has none: no settlement of it can
   *  land later, so what a handler holds for this payment need not outlive it. The seller always sets it. */
  validBefore?: number | null;
  /** The EIP-3009 authorization's nonce (lower-case hex), null when the payload has none: with `payer`, what the
   *  chain's `authorizationState` answers for, should the answer to this payment never be written. */
  nonce?: string | null;
};

/** A landed settlement, handed to the body renderer of a {@link PaidJson} answer. */
export type Settlement = {
  /** The settlement transaction hash (`access.tx`). */
  tx: string;
  payer: string;
  network: string;
  amountAtomic: string;
  /** Decimal USD string of the amount (`access.charged_usd`), e.g. `'0.02'`. */
  chargedUsd: string;
};

/**
 * A success answer whose JSON body is rendered after settlement, so it can carry the transaction hash
 * (`access.tx`) even though the handler runs before settle. Build it with {@link paidJson}. `render` is called only
 * once the settlement landed and may be async: that is where a handler signs, journals and publishes what its answer
 * names, so nothing of an unsettled call is ever written. If it rejects, the buyer gets a 500 naming the transaction.
 */
export type PaidJson = {
  readonly kind: 'paid-json';
  status: number;
  headers: Record<string, string>;
  render: (settlement: Settlement) => unknown | Promise<unknown>;
  /** Called instead of `render` when the settlement failed before anything was broadcast (nothing can land): what
   *  the handler took for this payment may be given back. Not called when the outcome is pending or unknown. */
  release?: () => Promise<void>;
};

/** What a paid handler returns: a `Response` (errors, or bodies that need no tx) or a {@link PaidJson}. */
export type PaidAnswer = Response | PaidJson;

/** The paid handler: validates its parameters (after payment verification, docs/api.md §4) and does the work. */
export type PaidHandler = (payment: VerifiedPayment) => Promise<PaidAnswer>;

/** Anything carrying a web `Request`, as every h3 v2 event does (`event.req`). */
export type RequestEvent = { req: Request };

/** The seller: a 402 builder and the whole paid flow around a handler. */
export type Seller = {
  /** A 402 for `offer`: `PAYMENT-REQUIRED` header (base64 v2 PaymentRequired) and the same object as JSON body,
   *  `Cache-Control: no-store`, CORS expose headers; `headers` are merged last. Works with the facilitator down. */
  paymentRequired(
    offer: Offer,
    options?: { error?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  /** The paid flow: 402 unless a valid payment came with the request, then the handler, then settlement. */
  sell(event: RequestEvent, offer: Offer, handler: PaidHandler): Promise<Response>;
};
