/**
 * `npm run invoices -- --month YYYY-MM` and its inbox twin: per integrator with hosted checks in a closed month, a
 * signed JSON invoice (the invoice's receipt: Ed25519 over its RFC 8785 bytes, verifiable with the JWKS like any
 * receipt) and its PDF, under `DATA_DIR/invoices/<month>/`. Idempotent: an invoice that exists is kept, and its files
 * are rewritten from the stored body, so a run interrupted between the files and the row finishes the next time.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monthBounds } from '../core/hosted.ts';
import { buildInvoice, type Invoice, invoiceId } from '../core/invoice.ts';
import { type Signer, signReceipt } from '../core/receipt.ts';
import { compactUsage, type JournalTail } from './hosted-usage.ts';
import type { IntegratorStore } from './integrator-store.ts';
import { renderInvoicePdf } from './invoice-pdf.ts';

export type SignedInvoice = Invoice & { kid: string; signature: string };
export type InvoiceRun = Array<{ id: string; integrator: string; total_atomic: string; created: boolean }>;

/** Issues the invoices of `month`; throws a `RangeError` for a month that has not ended at `now`. */
export async function issueInvoices(parts: {
  store: IntegratorStore;
  tail: JournalTail;
  month: string;
  now: Date;
  signer: Signer;
  dir: string;
  payTo: string;
  baseUrl: string;
}): Promise<InvoiceRun> {
  const { store, month } = parts;
  if (monthBounds(month).end.getTime() > parts.now.getTime()) {
    throw new RangeError(`${month} has not ended yet; invoices are issued for closed months`);
  }
  await compactUsage(store, parts.tail);
  const names = new Map((await store.integrators()).map((row) => [row.id, row.name]));
  const run: InvoiceRun = [];
  for (const usage of await store.usage({ month })) {
    const id = invoiceId(usage.integrator, month);
    const existing = await store.invoice(id);
    const signed =
      (existing?.body as SignedInvoice | undefined) ??
      signReceipt(
        buildInvoice({
          integrator: { id: usage.integrator, name: names.get(usage.integrator) ?? usage.integrator },
          month,
          calls: usage.calls,
          endUsers: usage.endUsers,
          payTo: parts.payTo,
          baseUrl: parts.baseUrl,
        }),
        parts.signer,
      );
    await writeInvoiceFiles(parts.dir, signed);
    const created =
      existing === null &&
      (await store.addInvoice({
        id,
        integrator: usage.integrator,
        month,
        totalAtomic: signed.total.atomic,
        body: signed,
        status: signed.total.atomic === '0' ? 'nothing_due' : 'open',
        tx: null,
        paidAt: null,
      }));
    run.push({ id, integrator: usage.integrator, total_atomic: signed.total.atomic, created });
  }
  return run;
}

/** Where an invoice's files live. */
export function invoicePaths(dir: string, invoice: { id: string; month: string }) {
  const base = join(dir, invoice.month, invoice.id);
  return { json: `${base}.json`, pdf: `${base}.pdf` };
}

async function writeInvoiceFiles(dir: string, invoice: SignedInvoice): Promise<void> {
  const paths = invoicePaths(dir, invoice);
  await mkdir(join(dir, invoice.month), { recursive: true });
  await atomicWrite(paths.json, `${JSON.stringify(invoice, null, 2)}\n`);
  await atomicWrite(paths.pdf, await renderInvoicePdf(invoice));
}

async function atomicWrite(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}
