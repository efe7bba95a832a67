/**
 * `npm run invoices -- --month YYYY-MM` and its inbox twin: per integrator with hosted checks in a closed month, a
 * signed JSON invoice (the invoice's receipt: Ed25519 over its RFC 8785 bytes, verifiable with the JWKS like any
 * receipt) and its PDF, under `DATA_DIR/invoices/<month>/`. Idempotent: an invoice that exists is kept, and its files
 * are rewritten from the stored body, so a run interrupted between the files and the row finishes the next time.
 *
 * Uses of earlier months that reached the usage after those months' runs (`core/late-uses.ts`) are billed on the
 * integrator's invoice of this month, which is issued for them even when the month itself has no use. Once a run has
 * finished its month is recorded. A rerun of a recorded month still issues an invoice to an integrator that has
 * none, unless a later invoice already began billing its uses of the month late (the rest are then late too, billed
 * on its next invoice), so no use is ever billed twice.
 *
 * Hosted watches are billed per watch-month (`watch_months`, docs/api.md "Watches"): an integrator whose watches
 * were active in the month gets an invoice for them even without a check. They are read from the watch store when
 * the run starts; a month's watch-months are all known once it has ended, so none are ever late.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monthBounds } from '../../core/hosted.ts';
import { buildInvoice, type Invoice, invoiceId, newPayToken } from '../../core/invoice.ts';
import { billedCalls, lateUses } from '../../core/late-uses.ts';
import { type Signer, signReceipt } from '../../core/receipt.ts';
import { renderInvoicePdf } from '../documents/invoice-pdf.ts';
import { compactUsage, type JournalTail } from '../hosted-meter/usage.ts';
import type { IntegratorStore } from './port.ts';

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
  /** Draws the pay-link tokens. */
  random: (n: number) => Uint8Array;
  /** The hosted watch-months per integrator of `[startMs, endMs)` (`WatchStore.watchMonths`); none when absent. */
  watchMonths?: (startMs: number, endMs: number) => Promise<Map<string, number>>;
}): Promise<InvoiceRun> {
  const { store, month } = parts;
  const bounds = monthBounds(month);
  if (bounds.end.getTime() > parts.now.getTime()) {
    throw new RangeError(`${month} has not ended yet; invoices are issued for closed months`);
  }
  await compactUsage(store, parts.tail);
  const names = new Map((await store.integrators()).map((row) => [row.id, row.name]));
  const runs = new Set(await store.invoiceRuns());
  const usage = await store.usage({});
  const watchMonths =
    (await parts.watchMonths?.(bounds.start.getTime(), bounds.end.getTime())) ?? new Map<string, number>();
  const run: InvoiceRun = [];
  const billed = new Set([...usage.map((row) => row.integrator), ...watchMonths.keys()]);
  for (const integrator of [...billed].sort()) {
    const id = invoiceId(integrator, month);
    const existing = await store.invoice(id);
    const own = usage.find((row) => row.integrator === integrator && row.month === month);
    let signed = existing?.body as SignedInvoice | undefined;
    if (signed === undefined) {
      const before = usage.some((row) => row.integrator === integrator && row.month < month);
      const invoices = before || runs.has(month) ? await store.invoices(integrator) : [];
      // A month already run whose uses of this integrator a later invoice began to bill late: the rest are late too.
      if ((billedCalls(invoices).get(month) ?? 0) > 0) continue;
      const earlier = before
        ? lateUses({ month, usage: usage.filter((row) => row.integrator === integrator), invoices, runs })
        : [];
      const watches = watchMonths.get(integrator) ?? 0;
      if (own === undefined && earlier.length === 0 && watches === 0) continue;
      signed = signReceipt(
        buildInvoice({
          integrator: { id: integrator, name: names.get(integrator) ?? integrator },
          month,
          calls: own?.calls ?? 0,
          endUsers: own?.endUsers ?? 0,
          payTo: parts.payTo,
          baseUrl: parts.baseUrl,
          payToken: newPayToken(parts.random),
          earlier,
          watchMonths: watches,
        }),
        parts.signer,
      );
    }
    const created =
      existing === null &&
      (await store.addInvoice({
        id,
        integrator,
        month,
        totalAtomic: signed.total.atomic,
        body: signed,
        status: signed.total.atomic === '0' ? 'nothing_due' : 'open',
        tx: null,
        paidAt: null,
        payToken: tokenOf(signed),
      }));
    // A concurrent run may have stored its own invoice first: the files are the stored one's.
    const stored = created || existing !== null ? signed : ((await store.invoice(id))?.body as SignedInvoice);
    await writeInvoiceFiles(parts.dir, stored);
    run.push({ id, integrator, total_atomic: stored.total.atomic, created });
  }
  await store.markInvoiceRun(month, parts.now.toISOString());
  return run;
}

/** The token of a signed invoice's pay link. */
function tokenOf(invoice: SignedInvoice): string {
  return new URL(invoice.pay_url).searchParams.get('token') ?? '';
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
