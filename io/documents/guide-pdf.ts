/**
 * The setup pack's PDF guide (docs/api.md §1.5, §2.9): an A4 document with a cover and contents page, headed pages,
 * wrapped paragraphs, lists, code blocks and "Page n of N" footers, laid out from the parsed guide.
 *
 * Reproducible byte for byte: the 14 standard PDF fonts need no font file (so neither the Debian DejaVu version
 * nor fontkit's subsetting can change the bytes between machines), every metadata field is fixed (dates come from
 * the guide's `edition`), and pdf-lib writes no random document id. The price is WinAnsi-only text: a character
 * outside it makes the build throw, which the unit tests would catch before a release.
 */
import { PDFDocument, type PDFPage, StandardFonts } from 'pdf-lib';
import {
  A4,
  ACCENT,
  type Cursor,
  type Fonts,
  INK,
  layoutBlock,
  MARGIN_X,
  MUTED,
  newPage,
  RULE,
  TOP,
  textWidth,
  WIDTH,
  wordsOf,
} from './_guide-layout.ts';
import type { Guide } from './guide-markdown.ts';

/** Renders the guide to PDF bytes. Same guide in, same bytes out. */
export async function renderGuidePdf(guide: Guide): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const fonts: Fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
    mono: await doc.embedFont(StandardFonts.Courier),
  };
  const date = new Date(`${guide.meta.edition}T00:00:00Z`);
  doc.setTitle(guide.meta.title, { showInWindowTitleBar: true });
  doc.setSubject(guide.meta.subtitle);
  doc.setAuthor('Spotcheck');
  doc.setKeywords(['x402', 'USDC', 'Base', 'agents', 'payments', 'Spotcheck']);
  doc.setCreator('Spotcheck setup pack');
  doc.setProducer('Spotcheck (pdf-lib 1.17.1)');
  doc.setLanguage('en');
  doc.setCreationDate(date);
  doc.setModificationDate(date);

  const cover = doc.addPage([A4.width, A4.height]);
  const contents: Array<{ title: string; page: number }> = [];
  const cursor: Cursor = { page: newPage(doc), y: TOP };
  for (const [index, block] of guide.blocks.entries()) {
    if (block.kind === 'h1') contents.push({ title: block.text, page: doc.getPageCount() });
    layoutBlock(doc, fonts, cursor, block, guide.blocks[index + 1]);
  }
  drawCover(cover, fonts, guide, contents);
  const pages = doc.getPages();
  for (const [index, page] of pages.entries()) decorate(page, fonts, guide, index + 1, pages.length);
  return doc.save({ useObjectStreams: false });
}

function drawCover(
  page: PDFPage,
  fonts: Fonts,
  guide: Guide,
  contents: Array<{ title: string; page: number }>,
) {
  let y = A4.height - 150;
  page.drawRectangle({ x: 0, y: A4.height - 18, width: A4.width, height: 18, color: ACCENT });
  page.drawText('SPOTCHECK SETUP PACK', { x: MARGIN_X, y, size: 10, font: fonts.bold, color: ACCENT });
  y -= 36;
  page.drawText(guide.meta.title, { x: MARGIN_X, y, size: 28, font: fonts.bold, color: INK });
  const cursor = { page, y: y - 14 };
  const sub = wordsOf([{ text: guide.meta.subtitle, style: 'regular' }]);
  const space = textWidth(fonts.regular, ' ', 13);
  let line = '';
  const lines: string[] = [];
  for (const word of sub) {
    const text = word.map((piece) => piece.text).join('');
    const next = line ? `${line} ${text}` : text;
    if (line && textWidth(fonts.regular, next, 13) > WIDTH - space) {
      lines.push(line);
      line = text;
    } else line = next;
  }
  if (line) lines.push(line);
  for (const text of lines) {
    cursor.y -= 18;
    page.drawText(text, { x: MARGIN_X, y: cursor.y, size: 13, font: fonts.regular, color: MUTED });
  }
  cursor.y -= 28;
  page.drawText(`Edition ${guide.meta.edition}`, {
    x: MARGIN_X,
    y: cursor.y,
    size: 10,
    font: fonts.regular,
    color: MUTED,
  });
  cursor.y -= 56;
  page.drawText('Contents', { x: MARGIN_X, y: cursor.y, size: 14, font: fonts.bold, color: INK });
  cursor.y -= 10;
  for (const entry of contents) {
    cursor.y -= 20;
    const number = String(entry.page);
    const numberWidth = textWidth(fonts.regular, number, 11);
    page.drawText(entry.title, { x: MARGIN_X, y: cursor.y, size: 11, font: fonts.regular, color: INK });
    page.drawText(number, {
      x: MARGIN_X + WIDTH - numberWidth,
      y: cursor.y,
      size: 11,
      font: fonts.regular,
      color: INK,
    });
    const from = MARGIN_X + textWidth(fonts.regular, entry.title, 11) + 6;
    page.drawLine({
      start: { x: from, y: cursor.y + 2 },
      end: { x: MARGIN_X + WIDTH - numberWidth - 6, y: cursor.y + 2 },
      thickness: 0.4,
      color: RULE,
      dashArray: [1, 2],
    });
  }
}

/** Running header (not on the cover) and the "Page n of N" footer. */
function decorate(page: PDFPage, fonts: Fonts, guide: Guide, number: number, total: number): void {
  if (number > 1) {
    page.drawText(guide.meta.title, {
      x: MARGIN_X,
      y: A4.height - 48,
      size: 8.5,
      font: fonts.regular,
      color: MUTED,
    });
    const edition = `Edition ${guide.meta.edition}`;
    const width = textWidth(fonts.regular, edition, 8.5);
    page.drawText(edition, {
      x: MARGIN_X + WIDTH - width,
      y: A4.height - 48,
      size: 8.5,
      font: fonts.regular,
      color: MUTED,
    });
    page.drawLine({
      start: { x: MARGIN_X, y: A4.height - 55 },
      end: { x: MARGIN_X + WIDTH, y: A4.height - 55 },
      thickness: 0.5,
      color: RULE,
    });
  }
  const footer = `Page ${number} of ${total}`;
  const width = textWidth(fonts.regular, footer, 8.5);
  page.drawText(footer, { x: (A4.width - width) / 2, y: 36, size: 8.5, font: fonts.regular, color: MUTED });
}
