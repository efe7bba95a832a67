/**
 * The PDF rendering of a hosted invoice (issue 9): one A4 page with the integrator, the period, the lines per band,
 * the total in USDC and where to pay it. Reproducible byte for byte like the setup pack's guide (`guide-pdf.ts`):
 * standard fonts only, fixed metadata dated from the invoice, no random document id. Integrator names are operator
 * input; characters outside WinAnsi are replaced by `?` so a name can never stop an invoice run.
 */
import { PDFDocument, type PDFFont, StandardFonts } from 'pdf-lib';
import type { Invoice } from '../core/invoice.ts';
import { A4, ACCENT, INK, MARGIN_X, MUTED, RULE, textWidth, WIDTH } from './_guide-layout.ts';

/** Renders the signed invoice to PDF bytes. Same invoice in, same bytes out. */
export async function renderInvoicePdf(
  invoice: Invoice & { kid: string; signature: string },
): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const mono = await doc.embedFont(StandardFonts.Courier);
  const date = new Date(invoice.issued_at);
  doc.setTitle(`Spotcheck invoice ${invoice.id}`);
  doc.setAuthor('Spotcheck');
  doc.setCreator('Spotcheck invoices');
  doc.setProducer('Spotcheck (pdf-lib 1.17.1)');
  doc.setLanguage('en');
  doc.setCreationDate(date);
  doc.setModificationDate(date);

  const page = doc.addPage([A4.width, A4.height]);
  let y = A4.height - 90;
  const text = (value: string, x: number, size: number, font: PDFFont = regular, color = INK) =>
    page.drawText(winAnsi(value), { x, y, size, font, color });
  const right = (value: string, size: number, font: PDFFont = regular) =>
    text(value, MARGIN_X + WIDTH - textWidth(font, winAnsi(value), size), size, font);

  page.drawRectangle({ x: 0, y: A4.height - 18, width: A4.width, height: 18, color: ACCENT });
  text('SPOTCHECK HOSTED MODE', MARGIN_X, 10, bold, ACCENT);
  y -= 34;
  text(`Invoice ${invoice.id}`, MARGIN_X, 22, bold);
  for (const [label, value] of [
    ['Integrator', `${invoice.integrator.name} (${invoice.integrator.id})`],
    ['Period', `${invoice.month} (${invoice.period.start} to ${invoice.period.end}, UTC)`],
    ['Issued', invoice.issued_at],
    ['Hosted checks', String(invoice.calls)],
    ['End users (by hash)', String(invoice.end_users)],
  ] as const) {
    y -= 20;
    text(label, MARGIN_X, 10, bold, MUTED);
    text(value, MARGIN_X + 130, 10);
  }

  y -= 40;
  const columns = [MARGIN_X, MARGIN_X + 150, MARGIN_X + 240];
  for (const [index, head] of ['Band', 'Checks', 'Unit price (atomic USDC)'].entries())
    text(head, columns[index] ?? MARGIN_X, 10, bold);
  right('Amount (USDC)', 10, bold);
  y -= 8;
  page.drawLine({ start: { x: MARGIN_X, y }, end: { x: MARGIN_X + WIDTH, y }, thickness: 0.6, color: RULE });
  for (const line of invoice.lines) {
    y -= 18;
    text(line.band, columns[0] ?? MARGIN_X, 10, mono);
    text(String(line.quantity), columns[1] ?? MARGIN_X, 10);
    text(line.unit_price_atomic, columns[2] ?? MARGIN_X, 10);
    right(line.amount_usd, 10);
  }
  // Late uses of months invoiced before (absent on invoices issued before they were billed).
  for (const late of invoice.earlier_months ?? []) {
    y -= 18;
    text(`${late.month} (late)`, columns[0] ?? MARGIN_X, 10, mono);
    text(String(late.calls), columns[1] ?? MARGIN_X, 10);
    text("that month's bands", columns[2] ?? MARGIN_X, 10);
    right(late.amount_usd, 10);
  }
  y -= 10;
  page.drawLine({ start: { x: MARGIN_X, y }, end: { x: MARGIN_X + WIDTH, y }, thickness: 0.6, color: RULE });
  y -= 20;
  text('Total', MARGIN_X, 12, bold);
  right(`USDC ${invoice.total.usd}  (${invoice.total.atomic} atomic)`, 12, bold);

  y -= 44;
  text('How to pay', MARGIN_X, 12, bold);
  for (const line of [
    `Pay through x402 at ${invoice.pay_url}`,
    `(a 402 for exactly ${invoice.total.atomic} atomic USDC, exact scheme),`,
    `in USDC on Base (${invoice.network}), asset ${invoice.asset},`,
    `to ${invoice.pay_to}.`,
  ]) {
    y -= 16;
    text(line, MARGIN_X, 9, mono);
  }
  y -= 36;
  text(
    'The JSON invoice beside this file is signed (Ed25519 over RFC 8785 bytes):',
    MARGIN_X,
    8.5,
    regular,
    MUTED,
  );
  y -= 13;
  text(`kid ${invoice.kid}`, MARGIN_X, 8, mono, MUTED);
  for (let i = 0; i < invoice.signature.length; i += 64) {
    y -= 12;
    text(invoice.signature.slice(i, i + 64), MARGIN_X, 8, mono, MUTED);
  }
  return doc.save({ useObjectStreams: false });
}

/** Keeps printable ASCII and Latin-1; anything else becomes `?` (WinAnsi cannot draw it). */
function winAnsi(value: string): string {
  return value.replace(/[^\x20-\x7e\xa0-\xff]/g, '?');
}
