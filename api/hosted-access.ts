/**
 * Serving one hosted call (docs/api.md §2.5, §5.4, §8), for the check and payment status: the per-key rate limit (429 with
 * `Retry-After`; the IETF RateLimit fields on every answer), the end user as a salted hash, the month's next call
 * reserved synchronously against the credit limit, and the use journaled before the answer leaves. Past the credit
 * limit the call is a 402 with the per-call x402 requirement and `x-service-hosted: credit_limit`; a payment sent
 * then is taken through the route's paid flow.
 */
import type { H3Event } from 'h3';
import type { HostedUse } from '../core/hosted-meter.ts';
import { priceText } from '../core/limits.ts';
import { hasPayment } from './access.ts';
import type { AppDeps } from './deps.ts';
import { apiError } from './errors.ts';
import type { Hosted, HostedCaller } from './hosted.ts';
import { type OfferName, offerPriceAtomic } from './x402/offers.ts';

const END_USER_MAX = 256;

/** The `hosted` block of an answer (docs/api.md §2.5). */
export function hostedBlock(use: HostedUse) {
  return {
    integrator_id: use.integrator,
    end_user_hash: use.endUser,
    price_atomic: use.priceAtomic.toString(),
    band: use.band,
    month: use.month,
    billed_on: 'invoice',
  } as const;
}

/** What a hosted answer adds to its body: `access` (the `hosted` block when billed) and `access_tier`. */
export type HostedAccess = {
  access: { tier: 'hosted'; hosted?: ReturnType<typeof hostedBlock> };
  access_tier: 'hosted';
};

/**
 * Answers a hosted call with what `produce` makes; `payPerCall` is the route's paid flow, past the credit limit.
 * `produce` journals `attached` with the receipt it issues, which makes the use durable; a call that issued no
 * receipt records the use on its own.
 */
export async function answerHosted<T extends object>(
  event: H3Event,
  deps: Pick<AppDeps, 'gate' | 'sales'> & { hosted: Hosted },
  caller: HostedCaller,
  offer: OfferName,
  produce: (attached: unknown) => Promise<{ body: T; receiptId: string | null }>,
  payPerCall: () => Promise<Response>,
): Promise<Response | (T & HostedAccess)> {
  const { hosted } = deps;
  const rate = await takeRate(event, hosted, caller);
  const endUser = endUserOf(event, deps);
  const reserved = await hosted.meter.reserve(
    caller.integrator.id,
    caller.integrator.creditLimitAtomic,
    endUser,
  );
  if (!reserved.ok) {
    if (hasPayment(event)) return payPerCall();
    return deps.sales.paymentRequired(
      event,
      offer,
      `This integrator reached its monthly credit limit; this call costs ${priceText(offerPriceAtomic(offer))} through x402.`,
      { 'x-service-hosted': 'credit_limit', ...rate.headers },
    );
  }
  const { use } = reserved;
  try {
    const { body, receiptId } = await produce(hosted.attachment(use, caller.key.id));
    if (receiptId === null) await hosted.record(use, caller.key.id);
    event.res.headers.set('cache-control', 'private, no-store');
    return {
      ...body,
      access: { tier: 'hosted' as const, hosted: hostedBlock(use) },
      access_tier: 'hosted' as const,
    };
  } catch (error) {
    // No answer, no use (like the free quota); a use the shared meter cannot give back stays counted.
    await Promise.resolve()
      .then(() => use.release())
      .catch((reason: unknown) => console.error('[spotcheck] [hosted] use not given back', reason));
    throw error;
  }
}

/** Counts a call of the key against its rate limit: the RateLimit fields on the answer, or a 429. */
export async function takeRate(event: H3Event, hosted: Hosted, caller: HostedCaller) {
  const rate = await hosted.rate.take(caller.key.id);
  for (const [name, value] of Object.entries(rate.headers)) event.res.headers.set(name, value);
  if (!rate.allowed) {
    throw apiError(429, 'rate_limited', 'This key made 120 checks in the last minute.', rate.headers);
  }
  return rate;
}

/** The salted hash of `x-service-end-user` (docs/api.md §5.4: only the hash is stored), null without the header. */
function endUserOf(event: H3Event, deps: Pick<AppDeps, 'gate'>): string | null {
  const value = event.req.headers.get('x-service-end-user');
  if (value === null) return null;
  if (value.length === 0 || value.length > END_USER_MAX) {
    throw apiError(400, 'bad_end_user', `x-service-end-user is 1 to ${END_USER_MAX} characters.`);
  }
  return deps.gate.identity.hash('eu', value);
}
