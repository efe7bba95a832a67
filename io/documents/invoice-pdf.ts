/**
 * The PDF rendering of a hosted invoice: one A4 page with the integrator, the period, the lines per band,
 * the total in USDC and where to pay it. Reproducible byte for byte like the setup pack's guide (`guide-pdf.ts`):
 * standard fonts only, fixed metadata dated from the invoice, no random document id. Integrator names are operator
 * input; characters outside WinAnsi are replaced by `?` so a name can never stop an invoice run.
 */
import { PDFDocument, type PDFFont, type PDFPage, StandardFonts } from 'pdf-lib';
import type { Invoice } from '../../core/invoice.ts';
import { A4, ACCENT, INK, MARGIN_X, MUTED, RULE, textWidth, WIDTH } from './_guide-layout.ts';

type SignedInvoice = Invoice & { kid: string; signature: string };

/** Renders the signed invoice to PDF bytes. Same invoice in, same bytes out. */
export async function renderInvoicePdf(invoice: SignedInvoice): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
    mono: await doc.embedFont(StandardFonts.Courier),
  };
  const date = new Date(invoice.issued_at);
  doc.setTitle(`Spotcheck invoice ${invoice.id}`);
  doc.setAuthor('Spotcheck');
  doc.setCreator('Spotcheck invoices');
  doc.setProducer('Spotcheck (pdf-lib 1.17.1)');
  doc.setLanguage('en');
  doc.setCreationDate(date);
  doc.setModificationDate(date);
  const pen: Pen = { page: doc.addPage([A4.width, A4.height]), fonts, y: A4.height - 90 };
  drawHead(pen, invoice);
  drawLines(pen, invoice);
  drawPayment(pen, invoice);
  return doc.save({ useObjectStreams: false });
}

/** The page being drawn, its fonts, and the baseline the next text goes on (it moves down the page). */
type Pen = {
  readonly page: PDFPage;
  readonly fonts: { regular: PDFFont; bold: PDFFont; mono: PDFFont };
  y: number;
};

function text(pen: Pen, value: string, x: number, size: number, font = pen.fonts.regular, color = INK): void {
  pen.page.drawText(winAnsi(value), { x, y: pen.y, size, font, color });
}

function right(pen: Pen, value: string, size: number, font = pen.fonts.regular): void {
  text(pen, value, MARGIN_X + WIDTH - textWidth(font, winAnsi(value), size), size, font);
}

function rule(pen: Pen): void {
  const { y } = pen;
  pen.page.drawLine({
    start: { x: MARGIN_X, y },
    end: { x: MARGIN_X + WIDTH, y },
    thickness: 0.6,
    color: RULE,
  });
}

/** The banner, the title and who the invoice is for, for when. */
function drawHead(pen: Pen, invoice: SignedInvoice): void {
  const { bold } = pen.fonts;
  pen.page.drawRectangle({ x: 0, y: A4.height - 18, width: A4.width, height: 18, color: ACCENT });
  text(pen, 'SPOTCHECK HOSTED MODE', MARGIN_X, 10, bold, ACCENT);
  pen.y -= 34;
  text(pen, `Invoice ${invoice.id}`, MARGIN_X, 22, bold);
  for (const [label, value] of [
    ['Integrator', `${invoice.integrator.name} (${invoice.integrator.id})`],
    ['Period', `${invoice.month} (${invoice.period.start} to ${invoice.period.end}, UTC)`],
    ['Issued', invoice.issued_at],
    ['Hosted checks', String(invoice.calls)],
    ['End users (by hash)', String(invoice.end_users)],
  ] as const) {
    pen.y -= 20;
    text(pen, label, MARGIN_X, 10, bold, MUTED);
    text(pen, value, MARGIN_X + 130, 10);
  }
}

/** The table: a line per band, the late uses of earlier months, the hosted watch-months, and the total. */
function drawLines(pen: Pen, invoice: SignedInvoice): void {
  const { bold, mono } = pen.fonts;
  pen.y -= 40;
  const columns = [MARGIN_X, MARGIN_X + 150, MARGIN_X + 240];
  for (const [index, head] of ['Band', 'Checks', 'Unit price (atomic USDC)'].entries())
    text(pen, head, columns[index] ?? MARGIN_X, 10, bold);
  right(pen, 'Amount (USDC)', 10, bold);
  pen.y -= 8;
  rule(pen);
  for (const line of invoice.lines) {
    pen.y -= 18;
    text(pen, line.band, columns[0] ?? MARGIN_X, 10, mono);
    text(pen, String(line.quantity), columns[1] ?? MARGIN_X, 10);
    text(pen, line.unit_price_atomic, columns[2] ?? MARGIN_X, 10);
    right(pen, line.amount_usd, 10);
  }
  // Late uses of months invoiced before (absent on invoices issued before they were billed).
  for (const late of invoice.earlier_months ?? []) {
    pen.y -= 18;
    text(pen, `${late.month} (late)`, columns[0] ?? MARGIN_X, 10, mono);
    text(pen, String(late.calls), columns[1] ?? MARGIN_X, 10);
    text(pen, "that month's bands", columns[2] ?? MARGIN_X, 10);
    right(pen, late.amount_usd, 10);
  }
  // Hosted watches, one per month of activity (absent on invoices without any, so their bytes stay as they were).
  const watches = invoice.watch_months;
  if (watches) {
    pen.y -= 18;
    text(pen, 'watch-months', columns[0] ?? MARGIN_X, 10, mono);
    text(pen, String(watches.quantity), columns[1] ?? MARGIN_X, 10);
    text(pen, watches.unit_price_atomic, columns[2] ?? MARGIN_X, 10);
    right(pen, watches.amount_usd, 10);
  }
  pen.y -= 10;
  rule(pen);
  pen.y -= 20;
  text(pen, 'Total', MARGIN_X, 12, bold);
  right(pen, `USDC ${invoice.total.usd}  (${invoice.total.atomic} atomic)`, 12, bold);
}

/** How to pay, and the signature of the JSON invoice. */
function drawPayment(pen: Pen, invoice: SignedInvoice): void {
  const { regular, bold, mono } = pen.fonts;
  pen.y -= 44;
  text(pen, 'How to pay', MARGIN_X, 12, bold);
  for (const line of [
    `Pay through x402 at ${invoice.pay_url}`,
    `(a 402 for exactly ${invoice.total.atomic} atomic USDC, exact scheme),`,
    `in USDC on Base (${invoice.network}), asset ${invoice.asset},`,
    `to ${invoice.pay_to}.`,
  ]) {
    pen.y -= 16;
    text(pen, line, MARGIN_X, 9, mono);
  }
  pen.y -= 36;
  text(
    pen,
    'The JSON invoice beside this file is signed (Ed25519 over RFC 8785 bytes):',
    MARGIN_X,
    8.5,
    regular,
    MUTED,
  );
  pen.y -= 13;
  text(pen, `kid ${invoice.kid}`, MARGIN_X, 8, mono, MUTED);
  for (let i = 0; i < invoice.signature.length; i += 64) {
    pen.y -= 12;
    text(pen, invoice.signature.slice(i, i + 64), MARGIN_X, 8, mono, MUTED);
  }
}

/** Keeps printable ASCII and Latin-1; anything else becomes `?` (WinAnsi cannot draw it). */
function winAnsi(value: string): string {
  return value.replace(/[^\x20-\x7e\xa0-\xff]/g, '?');
}
