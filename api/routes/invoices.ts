/**
 * Hosted invoices over HTTP (docs/decisions.md "Hosted mode"): `GET /v1/invoices/{id}` (the signed invoice, its
 * payment, its pay link and any overpayment) and `GET /v1/invoices/{id}.pdf`, read with a key of the integrator
 * invoiced; another integrator's key gets the same 404 as an unknown id.
 *
 * `GET`/`POST /v1/invoices/{id}/pay` sells the invoice through x402 for exactly its total, to the integrator's key
 * or to whoever holds the pay link (its random `token`); anyone else, whatever the id, gets one and the same 404, and
 * no answer to a caller without the key names the integrator or a transaction. The invoice is claimed in the shared
 * store (open → settling) once the facilitator verified the payment and before anything is settled, so of two payers
 * on any instances one settles and the other gets a 409 with no money moved; a settlement that failed before being
 * broadcast gives the claim back, one whose outcome is unknown keeps it until it expires. A settlement that lands on
 * an invoice already paid is answered as such and recorded as an overpayment, never as a second payment.
 */
import { readFile } from 'node:fs/promises';
import type { H3, H3Event } from 'h3';
import { atomicToUsdText } from '../../core/amount.ts';
import { isInvoiceId, isPayToken, payUrl } from '../../core/invoice.ts';
import { holdUntil } from '../../core/replay.ts';
import { hashSecret, sameHash } from '../../core/service-key.ts';
import { renderInvoicePdf } from '../../io/documents/invoice-pdf.ts';
import { invoicePaths, type SignedInvoice } from '../../io/integrators/invoices.ts';
import type { InvoiceRow, Overpayment } from '../../io/integrators/port.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { type Hosted, requireHostedCaller } from '../hosted.ts';
import { settleLeftClaim } from '../invoice-claims.ts';
import type { Offer, VerifiedPayment } from '../x402/seller.ts';

/**
 * Seconds a claim outlives its authorization's `validBefore`: the chain's clock and ours may differ a little, and a
 * settlement cannot land after the authorization expired on chain.
 */
export const CLAIM_SKEW_SECONDS = 60;
/** How long a claim lasts for an authorization without `validBefore`: the lifetime the seller asks buyers to sign. */
const UNDATED_HOLD_SECONDS = 300;

/** The one answer for an unknown id, a wrong or missing token, and a key of another integrator. */
const notFound = () => apiError(404, 'invoice_not_found', 'No invoice at this link.');
/** A fixed token's hash: an unknown id costs the same hash and comparison as a known one. */
const DECOY = hashSecret('no such invoice');

/** Registers the invoice routes. */
export function invoiceRoutes(app: H3, deps: AppDeps): void {
  const pay = (event: H3Event) => payInvoice(event, deps);
  app.get('/v1/invoices/:id/pay', pay);
  app.post('/v1/invoices/:id/pay', pay);
  app.get('/v1/invoices/:file', async (event) => {
    const file = event.context.params?.file ?? '';
    const pdf = file.endsWith('.pdf');
    const { hosted, row } = await ownInvoice(event, deps, pdf ? file.slice(0, -4) : file);
    event.res.headers.set('cache-control', 'private, no-store');
    if (!pdf) {
      const overpayments = await hosted.store.overpayments({ invoice: row.id });
      return { invoice: row.body, payment: paymentOf(row, deps, overpayments) };
    }
    const bytes = await readFile(invoicePaths(hosted.invoicesDir, row).pdf).catch(() =>
      renderInvoicePdf(row.body as SignedInvoice),
    );
    return new Response(new Uint8Array(bytes), {
      headers: {
        'content-type': 'application/pdf',
        'content-disposition': `inline; filename="${row.id}.pdf"`,
        'cache-control': 'private, no-store',
      },
    });
  });
}

async function payInvoice(event: H3Event, deps: AppDeps) {
  const id = event.context.params?.id ?? '';
  const { hosted, row, owner } = await payableInvoice(event, deps, id);
  refuseUnpayable(row, owner, nowSeconds(deps));
  const method = event.req.method === 'POST' ? 'POST' : 'GET';
  const offer: Offer = {
    route: `${method} /v1/invoices/${id}/pay`,
    priceAtomic: row.totalAtomic,
    // No integrator name: the 402 says no more than the link its caller holds.
    description: 'Spotcheck hosted invoice',
    resourceUrl: `${deps.baseUrl}/v1/invoices/${id}/pay`,
    mimeType: 'application/json',
  };
  // Runs after the facilitator verified the payment and before anything is settled (api/x402/seller.ts).
  return deps.sales.sellOffer(event, offer, async (payment: VerifiedPayment) => {
    const holder = Array.from(deps.random(16), (b) => b.toString(16).padStart(2, '0')).join('');
    const at = nowSeconds(deps);
    const until =
      holdUntil(at, { validBefore: payment.validBefore ?? null, fallbackSeconds: UNDATED_HOLD_SECONDS }) +
      CLAIM_SKEW_SECONDS;
    const authorization =
      payment.nonce && payment.payer ? { payer: payment.payer.toLowerCase(), nonce: payment.nonce } : null;
    if (!(await hosted.store.claimInvoice(id, holder, until, at, authorization))) {
      refuseUnpayable((await hosted.store.invoice(id)) ?? row, owner, at);
      throw inFlight();
    }
    return {
      status: 200,
      release: () => hosted.store.releaseInvoice(id, holder),
      complete: async (access) => {
        const paidAt = deps.now().toISOString();
        if (await hosted.store.markInvoicePaid(id, access.tx, paidAt)) {
          return { invoice_id: id, payment: { status: 'paid', tx: access.tx, paid_at: paidAt } };
        }
        await hosted.store.addOverpayment({
          invoice: id,
          integrator: row.integrator,
          tx: access.tx,
          payer: payment.payer,
          amountAtomic: payment.amountAtomic,
          at: paidAt,
        });
        return {
          invoice_id: id,
          payment: { status: 'overpaid', tx: access.tx, paid_at: paidAt },
          message:
            'This invoice was already paid by another settlement; this one is recorded as an overpayment for the operator to return.',
        };
      },
    };
  });
}

/** The invoice a pay request may see: with the invoiced integrator's key, or with the link's token; else the 404. */
async function payableInvoice(
  event: H3Event,
  deps: AppDeps,
  id: string,
): Promise<{ hosted: Hosted; row: InvoiceRow; owner: boolean }> {
  // A presented key must be a valid one (a 401 never depends on the invoice); it is then the owner's or nobody's.
  const headers = event.req.headers;
  const keyless = headers.get('authorization') === null && headers.get('x-service-key') === null;
  const caller = keyless ? null : requireHostedCaller(event, deps.hosted).caller;
  const hosted = deps.hosted;
  const row = hosted !== null && isInvoiceId(id) ? await hosted.store.invoice(id) : null;
  const token = new URL(event.req.url).searchParams.get('token');
  const expected = row !== null && isPayToken(row.payToken) ? hashSecret(row.payToken) : DECOY;
  const tokenFits = sameHash(hashSecret(isPayToken(token) ? token : ''), expected);
  const owner = row !== null && caller?.integrator.id === row.integrator;
  if (hosted === null || row === null || !(owner || tokenFits)) throw notFound();
  // A claim its instance never finished may hide a payment that landed: never sell a paid invoice again.
  return { hosted, row: await settleLeftClaim(row, claimDeps(hosted, deps)), owner };
}

/** Throws the 409 of an invoice that cannot be paid now; the transaction only to the integrator's key. */
function refuseUnpayable(row: InvoiceRow, owner: boolean, now: number): void {
  if (row.status === 'paid') {
    throw apiError(
      409,
      'invoice_paid',
      owner ? `This invoice was paid in transaction ${row.tx}.` : 'This invoice is paid.',
    );
  }
  if (row.status === 'nothing_due') throw apiError(409, 'nothing_due', 'This invoice has nothing to pay.');
  if (row.claim !== null && row.claim.until > now) throw inFlight();
}

const inFlight = () =>
  apiError(
    409,
    'invoice_payment_in_flight',
    'A payment of this invoice is being settled; nothing was charged.',
  );

const nowSeconds = (deps: Pick<AppDeps, 'now'>) => Math.floor(deps.now().getTime() / 1000);

/**
 * The payment block of an invoice, for its integrator: `open`, `settling` (a payment is being settled), `paid`
 * (with the settlement transaction) or `nothing_due`; the pay link to hand a payer; settlements that landed after
 * it was paid.
 */
export function paymentOf(
  row: InvoiceRow,
  deps: Pick<AppDeps, 'baseUrl' | 'now'>,
  overpayments: Overpayment[],
) {
  const settling = row.claim !== null && row.claim.until > nowSeconds(deps);
  return {
    status: row.status === 'settling' && !settling ? 'open' : row.status,
    tx: row.tx,
    paid_at: row.paidAt,
    pay_url: payUrl(deps.baseUrl, row.id, row.payToken),
    overpayments: overpayments.map(publicOverpayment),
  };
}

/** An overpayment as its integrator reads it. */
export function publicOverpayment(row: Overpayment) {
  return {
    tx: row.tx,
    payer: row.payer,
    amount: { atomic: row.amountAtomic, usd: atomicToUsdText(row.amountAtomic) },
    at: row.at,
  };
}

async function ownInvoice(event: H3Event, deps: AppDeps, id: string) {
  const { hosted, caller } = requireHostedCaller(event, deps.hosted);
  const row: InvoiceRow | null = isInvoiceId(id) ? await hosted.store.invoice(id) : null;
  if (!row || row.integrator !== caller.integrator.id)
    throw apiError(404, 'invoice_not_found', 'No invoice of yours has that id.');
  return { hosted, row: await settleLeftClaim(row, claimDeps(hosted, deps)) };
}

/** What {@link settleLeftClaim} reads an invoice's claim with. */
export const claimDeps = (hosted: Hosted, deps: AppDeps) => ({
  store: hosted.store,
  chain: deps.chain,
  payTo: hosted.payTo,
  now: deps.now,
});
