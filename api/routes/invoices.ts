/**
 * Hosted invoices over HTTP (issue 9 item 4): `GET /v1/invoices/{id}` (the signed invoice and its payment) and
 * `GET /v1/invoices/{id}.pdf`, read with a key of the integrator invoiced; another integrator's key gets the same
 * 404 as an unknown id.
 */
import { readFile } from 'node:fs/promises';
import type { H3, H3Event } from 'h3';
import { isInvoiceId } from '../../core/invoice.ts';
import type { InvoiceRow } from '../../io/integrator-store.ts';
import { renderInvoicePdf } from '../../io/invoice-pdf.ts';
import { invoicePaths, type SignedInvoice } from '../../io/invoices.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { type Hosted, requireHostedCaller } from '../hosted.ts';

/** Registers the invoice routes. */
export function invoiceRoutes(app: H3, deps: AppDeps): void {
  app.get('/v1/invoices/:file', async (event) => {
    const file = event.context.params?.file ?? '';
    const pdf = file.endsWith('.pdf');
    const row = await ownInvoice(event, deps.hosted, pdf ? file.slice(0, -4) : file);
    event.res.headers.set('cache-control', 'private, no-store');
    if (!pdf) return { invoice: row.body, payment: paymentOf(row) };
    const dir = (deps.hosted as Hosted).invoicesDir;
    const bytes = await readFile(invoicePaths(dir, row).pdf).catch(() =>
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

/** The payment block of an invoice: `open`, `paid` (with the settlement transaction) or `nothing_due`. */
export function paymentOf(row: InvoiceRow) {
  return { status: row.status, tx: row.tx, paid_at: row.paidAt };
}

async function ownInvoice(event: H3Event, hosted: Hosted | null, id: string): Promise<InvoiceRow> {
  const caller = requireHostedCaller(event, hosted);
  const row = isInvoiceId(id) ? await hosted?.store.invoice(id) : null;
  if (!row || row.integrator !== caller.integrator.id)
    throw apiError(404, 'invoice_not_found', 'No invoice of yours has that id.');
  return row;
}
