/**
 * Selling the service's own calls: the app's view of the x402 seller (`api/x402/seller.ts`). A handler returns its
 * status and body (or a `complete` step, see {@link SaleAnswer}); the body gets `access` (`tier: "paid"`,
 * `charged_usd`, `tx`) only once settlement landed, and a handler that raises an API error (a 400 after payment,
 * docs/api.md §4) is answered without settling anything.
 */
import { type H3Event, HTTPError } from 'h3';
import type { SaleAnswer, Sales } from './deps.ts';
import { toErrorResponse } from './errors.ts';
import { type OfferMethod, offerFor } from './x402/offers.ts';
import { type Offer, paidAccess, paidJson, type Seller, type VerifiedPayment } from './x402/seller.ts';

/** Wraps the seller for the app's routes. */
export function createSales(seller: Seller, baseUrl: string): Sales {
  const offer = (event: H3Event, name: Parameters<Sales['sell']>[1]) =>
    offerFor(name, baseUrl, event.req.method === 'POST' ? 'POST' : ('GET' satisfies OfferMethod));
  return {
    paymentRequired(event, name, error, headers) {
      return seller.paymentRequired(offer(event, name), { error, ...(headers ? { headers } : {}) });
    },
    sell(event, name, handler) {
      return sellOffer(event, offer(event, name), handler);
    },
    sellOffer,
  };

  function sellOffer(
    event: H3Event,
    made: Offer,
    handler: (payment: VerifiedPayment) => Promise<SaleAnswer>,
  ) {
    return seller.sell(event, made, async (payment) => {
      try {
        const answer: SaleAnswer = await handler(payment);
        return paidJson(
          async (settlement) => {
            const access = paidAccess(settlement);
            const body = 'complete' in answer ? await answer.complete(access) : answer.body;
            return { ...body, access };
          },
          {
            status: answer.status,
            ...('release' in answer && answer.release ? { release: answer.release } : {}),
          },
        );
      } catch (error) {
        if (error instanceof HTTPError) return toErrorResponse(error);
        throw error;
      }
    });
  }
}
