/**
 * What the h3 app needs from the world, wired once by the entry file (`api/main.ts`) or by a test.
 */
import type { H3Event } from 'h3';
import type { CheckAnswerPaid } from '../core/answer-schemas.ts';
import type { BadgeRenderer } from '../io/documents/badge-image.ts';
import type { Jwks } from '../io/keys.ts';
import type { OptOutSource } from '../io/opt-out.ts';
import type { WebhookPoster } from '../io/probe/webhook-post.ts';
import type { Delistings } from '../io/runs/delisted.ts';
import type { WatchStore } from '../io/watches/port.ts';
import type { Gate } from './access.ts';
import type { CheckDeps, PaidAccess } from './check.ts';
import type { Hosted } from './hosted.ts';
import type { PaidCallIntake } from './paid-call-intake.ts';
import type { CheckParams } from './params.ts';
import type { ChainReaderLike } from './payment-status.ts';
import type { ListingsDeps } from './routes/listings.ts';
import type { OfferName } from './x402/offers.ts';
import type { Offer, VerifiedPayment } from './x402/seller.ts';

/**
 * A paid answer in the making; the body gets `access` once settlement landed. A handler whose answer names a receipt
 * gives `complete` instead of `body`: it runs only after the settlement landed, issues the receipt (signed with this
 * access block, journaled and fsynced, then published) and resolves with the body. Nothing of an unsettled call is
 * written.
 */
export type SaleAnswer =
  | { status: number; body: object }
  | {
      status: number;
      complete: (access: PaidAccess) => Promise<object>;
      /** Called instead of `complete` when the settlement failed before anything was broadcast. */
      release?: () => Promise<void>;
    };

/** Selling through x402 (api/sales.ts). */
export type Sales = {
  /** The 402 of an offer, with the requirement in `PAYMENT-REQUIRED` and in the body. */
  paymentRequired(
    event: H3Event,
    offer: OfferName,
    error: string,
    headers?: Record<string, string>,
  ): Promise<Response>;
  /** Verifies the payment, runs `handler`, settles only after a successful answer, and completes the answer only
   *  after the settlement landed. */
  sell(event: H3Event, offer: OfferName, handler: () => Promise<SaleAnswer>): Promise<Response>;
  /** The same for an offer made at request time (an invoice, priced at its total); the handler is given the
   *  verified payment (payer, the authorization's `validBefore`). */
  sellOffer(
    event: H3Event,
    offer: Offer,
    handler: (payment: VerifiedPayment) => Promise<SaleAnswer>,
  ): Promise<Response>;
};

export type AppDeps = CheckDeps &
  ListingsDeps & {
    gate: Gate;
    sales: Sales;
    jwks: () => Promise<Jwks>;
    /** The seller host's reputation for paid answers; null while the store cannot say. */
    reputation: (params: CheckParams) => Promise<CheckAnswerPaid['reputation']>;
    /** The chain sources of payment status; null when RPC_URLS is empty (the routes answer 503). */
    chain: ChainReaderLike | null;
    /** Hosted mode: integrators, keys, usage, invoices. Null only where an app is built without it (tests of other
     *  routes): every integrator key is then a 401. */
    hosted: Hosted | null;
    /** Published known-answer runs, taken in without a restart; absent where no DATA_DIR runs are read (tests). */
    paidCalls?: PaidCallIntake;
    /** The public site: live badges and the built folder (`npm run build:site`); absent in API-only tests. */
    site?: SiteDeps;
    /** The published crawl run's delistings, shown by by-url (`io/runs/delisted.ts`); absent: none shown. */
    delistings?: Delistings;
    /** Watches (api/routes/watches.ts); absent where an app is built without them (tests of other routes). */
    watches?: WatchDeps;
  };

/**
 * What the watch routes need: the store, the SSRF gate of URLs (the webhook poster's), the probe interval, and the
 * host opt-out list (a watch of a listed host is refused; none given, none applies).
 */
export type WatchDeps = {
  store: WatchStore;
  poster: WebhookPoster;
  intervalSeconds: number;
  optOut?: OptOutSource;
};

export type SiteDeps = { badges: BadgeRenderer; dir: string };
