/**
 * What the h3 app needs from the world, wired once by the entry file (`api/main.ts`) or by a test.
 */
import type { H3Event } from 'h3';
import type { Jwks } from '../io/keys.ts';
import type { Gate } from './access.ts';
import type { CheckDeps } from './check.ts';
import type { CheckParams } from './params.ts';
import type { ChainReaderLike } from './payment-status.ts';

export type OfferName = 'check' | 'lookup' | 'payment-status' | 'setup-pack';

/** A paid answer in the making: the body gets `access` (tier, charged_usd, tx) once settlement landed. */
export type PaidAnswer = { status: number; body: Record<string, unknown> };

/** Selling through x402 (api/sales.ts). */
export type Sales = {
  /** The 402 of an offer, with the requirement in `PAYMENT-REQUIRED` and in the body. */
  paymentRequired(
    event: H3Event,
    offer: OfferName,
    error: string,
    headers?: Record<string, string>,
  ): Promise<Response>;
  /** Verifies the payment, runs `handler`, and settles only after a successful answer. */
  sell(event: H3Event, offer: OfferName, handler: () => Promise<PaidAnswer>): Promise<Response>;
};

export type AppDeps = CheckDeps & {
  gate: Gate;
  sales: Sales;
  jwks: () => Promise<Jwks>;
  /** The seller host's reputation for paid answers; null while the store cannot say. */
  reputation: (params: CheckParams) => Promise<Record<string, unknown> | null>;
  /** The chain sources of payment status; null when RPC_URLS is empty (the routes answer 503). */
  chain: ChainReaderLike | null;
};
