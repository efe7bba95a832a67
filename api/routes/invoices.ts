/**
 * Hosted invoices over HTTP (issue 9 item 4): `GET /v1/invoices/{id}` (the signed invoice and its payment) and
 * `GET /v1/invoices/{id}.pdf`, read with a key of the integrator invoiced; another integrator's key gets the same
 * 404 as an unknown id. `GET`/`POST /v1/invoices/{id}/pay` sells the invoice through x402 for exactly its total:
 * anyone holding the id may pay it; one payment at a time, and once paid it is marked with the settlement
 * transaction before the answer leaves and never sold again (409 `invoice_paid`).
 */
import { readFile } from 'node:fs/promises';
import type { H3, H3Event } from 'h3';
import { isInvoiceId } from '../../core/invoice.ts';
import type { InvoiceRow } from '../../io/integrator-store.ts';
import { renderInvoicePdf } from '../../io/invoice-pdf.ts';
import { invoicePaths, type SignedInvoice } from '../../io/invoices.ts';
import { hasPayment } from '../access.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { type Hosted, requireHostedCaller } from '../hosted.ts';
import type { Offer } from '../x402/seller.ts';

/** Registers the invoice routes. */
export function invoiceRoutes(app: H3, deps: AppDeps): void {
  const paying = new Set<string>();
  const pay = (event: H3Event) => payInvoice(event, deps, paying);
  app.get('/v1/invoices/:id/pay', pay);
  app.post('/v1/invoices/:id/pay', pay);
  app.get('/v1/invoices/:file', async (event) => {
    const file = event.context.params?.file ?? '';
    const pdf = file.endsWith('.pdf');
    const { hosted, row } = await ownInvoice(event, deps.hosted, pdf ? file.slice(0, -4) : file);
    event.res.headers.set('cache-control', 'private, no-store');
    if (!pdf) return { invoice: row.body, payment: paymentOf(row) };
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

async function payInvoice(event: H3Event, deps: AppDeps, paying: Set<string>) {
  const id = event.context.params?.id ?? '';
  const payment = hasPayment(event);
  if (payment) {
    // Claimed before the invoice is read, so two payments can never both find it open.
    if (paying.has(id))
      throw apiError(409, 'invoice_payment_in_flight', 'A payment of this invoice is being settled.');
    paying.add(id);
  }
  try {
    const row = isInvoiceId(id) ? await deps.hosted?.store.invoice(id) : null;
    if (!row) throw apiError(404, 'invoice_not_found', 'No invoice has that id.');
    if (row.status === 'paid')
      throw apiError(409, 'invoice_paid', `This invoice was paid in transaction ${row.tx}.`);
    if (row.status === 'nothing_due') throw apiError(409, 'nothing_due', 'This invoice has nothing to pay.');
    const method = event.req.method === 'POST' ? 'POST' : 'GET';
    const offer: Offer = {
      route: `${method} /v1/invoices/${id}/pay`,
      priceAtomic: row.totalAtomic,
      description: `Spotcheck hosted invoice ${id} (${row.month}, integrator ${row.integrator})`,
      resourceUrl: `${deps.baseUrl}/v1/invoices/${id}/pay`,
      mimeType: 'application/json',
    };
    return await deps.sales.sellOffer(event, offer, async () => ({
      status: 200,
      complete: async (access) => {
        const paidAt = deps.now().toISOString();
        await deps.hosted?.store.markInvoicePaid(id, access.tx, paidAt);
        return { invoice_id: id, payment: { status: 'paid', tx: access.tx, paid_at: paidAt } };
      },
    }));
  } finally {
    if (payment) paying.delete(id);
  }
}

/** The payment block of an invoice: `open`, `paid` (with the settlement transaction) or `nothing_due`. */
export function paymentOf(row: InvoiceRow) {
  return { status: row.status, tx: row.tx, paid_at: row.paidAt };
}

async function ownInvoice(event: H3Event, maybe: Hosted | null, id: string) {
  const { hosted, caller } = requireHostedCaller(event, maybe);
  const row: InvoiceRow | null = isInvoiceId(id) ? await hosted.store.invoice(id) : null;
  if (!row || row.integrator !== caller.integrator.id)
    throw apiError(404, 'invoice_not_found', 'No invoice of yours has that id.');
  return { hosted, row };
}
