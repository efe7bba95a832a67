/**
 * Page layout of the guide PDF (see `guide-pdf.ts`): A4 geometry, fonts and colours, and the flow of blocks
 * (headings that keep with what follows, wrapped mixed-style paragraphs, list items, code blocks) across pages.
 */
import { type PDFDocument, type PDFFont, type PDFPage, rgb } from 'pdf-lib';
import { type GuideBlock, type InlineStyle, inlineSpans, type Span } from './guide-markdown.ts';

/** A4 in PDF points. */
export const A4 = { width: 595.28, height: 841.89 };
/** Left and right margin. */
export const MARGIN_X = 62;
/** Where the text of a page starts (below the running header). */
export const TOP = A4.height - 84;
const BOTTOM = 66;
/** Width of the text column. */
export const WIDTH = A4.width - 2 * MARGIN_X;
const BODY = { size: 10.5, leading: 15 };
const MONO_INLINE = 9.4;
const CODE = { size: 8.2, leading: 10.8, pad: 7 };
/** Body text colour. */
export const INK = rgb(0.11, 0.14, 0.19);
/** Secondary text (header, footer, subtitle). */
export const MUTED = rgb(0.36, 0.4, 0.45);
/** Headings, markers and the cover band. */
export const ACCENT = rgb(0.12, 0.38, 0.64);
const CODE_BG = rgb(0.95, 0.96, 0.97);
/** Hairlines under headings and the header. */
export const RULE = rgb(0.82, 0.85, 0.88);

/** The three standard fonts, by inline style. */
export type Fonts = Record<InlineStyle, PDFFont>;
/** A word: styled pieces with no space between them. */
export type Word = Span[];
/** Where the flow is: the current page and the baseline position on it. */
export type Cursor = { page: PDFPage; y: number };

/** Adds an empty A4 page. */
export function newPage(doc: PDFDocument): PDFPage {
  return doc.addPage([A4.width, A4.height]);
}

/** Moves to a new page when fewer than `needed` points are left above the bottom margin. */
function ensure(doc: PDFDocument, cursor: Cursor, needed: number): void {
  if (cursor.y - needed < BOTTOM) {
    cursor.page = newPage(doc);
    cursor.y = TOP;
  }
}

/** Lays out one block at the cursor, breaking pages as needed; `next` lets headings keep with what follows. */
export function layoutBlock(
  doc: PDFDocument,
  fonts: Fonts,
  cursor: Cursor,
  block: GuideBlock,
  next?: GuideBlock,
): void {
  // Headings keep at least three lines of what follows on their page.
  const keep = next?.kind === 'code' ? CODE.leading * 3 + CODE.pad * 2 : BODY.leading * 3;
  switch (block.kind) {
    case 'h1': {
      if (cursor.y < TOP) cursor.y -= 16;
      ensure(doc, cursor, 30 + keep);
      cursor.y -= 18;
      cursor.page.drawText(block.text, {
        x: MARGIN_X,
        y: cursor.y,
        size: 17,
        font: fonts.bold,
        color: ACCENT,
      });
      cursor.y -= 7;
      cursor.page.drawLine({
        start: { x: MARGIN_X, y: cursor.y },
        end: { x: MARGIN_X + WIDTH, y: cursor.y },
        thickness: 0.6,
        color: RULE,
      });
      cursor.y -= 12;
      return;
    }
    case 'h2':
      cursor.y -= 6;
      ensure(doc, cursor, 20 + keep);
      cursor.y -= 13;
      cursor.page.drawText(block.text, {
        x: MARGIN_X,
        y: cursor.y,
        size: 12.5,
        font: fonts.bold,
        color: INK,
      });
      cursor.y -= 8;
      return;
    case 'p':
      paragraph(doc, fonts, cursor, inlineSpans(block.text), MARGIN_X, WIDTH);
      cursor.y -= 7;
      return;
    case 'li': {
      const indent = 16;
      ensure(doc, cursor, BODY.leading);
      const markerFont = block.marker === '\u2022' ? fonts.regular : fonts.bold;
      cursor.page.drawText(block.marker, {
        x: MARGIN_X + 3,
        y: cursor.y - BODY.size - 1,
        size: BODY.size,
        font: markerFont,
        color: ACCENT,
      });
      paragraph(doc, fonts, cursor, inlineSpans(block.text), MARGIN_X + indent + 3, WIDTH - indent - 3);
      cursor.y -= next?.kind === 'li' ? 4 : 9;
      return;
    }
    case 'code':
      codeBlock(doc, fonts, cursor, block.lines);
      return;
  }
}

/**
 * Width of `text` as pdf-lib draws it. `widthOfTextAtSize` subtracts Helvetica's kerning pairs, but drawn text
 * is not kerned, so long lines measured that way come out wider than measured and runs after them overlap.
 */
export function textWidth(font: PDFFont, text: string, size: number): number {
  let cache = glyphWidths.get(font);
  if (!cache) {
    cache = new Map();
    glyphWidths.set(font, cache);
  }
  let width = 0;
  for (const char of text) {
    let unit = cache.get(char);
    if (unit === undefined) {
      unit = font.widthOfTextAtSize(char, 1000);
      cache.set(char, unit);
    }
    width += unit;
  }
  return (width * size) / 1000;
}

const glyphWidths = new WeakMap<PDFFont, Map<string, number>>();

function sizeOf(style: InlineStyle): number {
  return style === 'mono' ? MONO_INLINE : BODY.size;
}

function widthOf(fonts: Fonts, word: Word): number {
  let width = 0;
  for (const span of word) width += textWidth(fonts[span.style], span.text, sizeOf(span.style));
  return width;
}

/** Splits styled text into words (spans with no space between them), keeping each piece's style. */
export function wordsOf(spans: Span[]): Word[] {
  const words: Word[] = [];
  let current: Word = [];
  for (const span of spans) {
    const parts = span.text.split(/(\s+)/);
    for (const part of parts) {
      if (part === '') continue;
      if (/^\s+$/.test(part)) {
        if (current.length) words.push(current);
        current = [];
      } else current.push({ text: part, style: span.style });
    }
  }
  if (current.length) words.push(current);
  return words;
}

/** Breaks a word wider than a whole line into pieces that fit (long URLs and hashes). */
function splitWide(fonts: Fonts, word: Word, max: number): Word[] {
  if (widthOf(fonts, word) <= max) return [word];
  const out: Word[] = [];
  let line: Word = [];
  for (const span of word) {
    for (const char of span.text) {
      const candidate = [...line, { text: char, style: span.style }];
      if (line.length && widthOf(fonts, candidate) > max) {
        out.push(line);
        line = [{ text: char, style: span.style }];
      } else line = candidate;
    }
  }
  if (line.length) out.push(line);
  return out;
}

function paragraph(
  doc: PDFDocument,
  fonts: Fonts,
  cursor: Cursor,
  spans: Span[],
  x: number,
  max: number,
): void {
  const space = textWidth(fonts.regular, ' ', BODY.size);
  const words = wordsOf(spans).flatMap((word) => splitWide(fonts, word, max));
  let line: Word[] = [];
  let width = 0;
  const flush = () => {
    ensure(doc, cursor, BODY.leading);
    cursor.y -= BODY.leading;
    drawLine(cursor.page, fonts, line, x, cursor.y + BODY.leading - BODY.size - 1, space);
    line = [];
    width = 0;
  };
  for (const word of words) {
    const w = widthOf(fonts, word);
    const previous = line.at(-1)?.at(-1);
    // drawLine draws a space inside a same-style run in that style's font (wider for Courier).
    const gap =
      previous && previous.style === word[0]?.style
        ? textWidth(fonts[previous.style], ' ', sizeOf(previous.style))
        : space;
    if (line.length && width + gap + w > max) flush();
    width += (line.length ? gap : 0) + w;
    line.push(word);
  }
  if (line.length) flush();
}

/** Draws one line, merging neighbouring pieces of the same style so text extraction reads whole phrases. */
function drawLine(page: PDFPage, fonts: Fonts, words: Word[], x: number, y: number, space: number): void {
  let at = x;
  let run: (Span & { x: number }) | null = null;
  const emit = (done: Span & { x: number }) =>
    page.drawText(done.text, { x: done.x, y, size: sizeOf(done.style), font: fonts[done.style], color: INK });
  for (const [index, word] of words.entries()) {
    for (const [pieceIndex, piece] of word.entries()) {
      const gap = index > 0 && pieceIndex === 0;
      if (run && run.style === piece.style) {
        // A space inside a run is drawn in the run's own font, so advance by that font's space.
        if (gap) at += textWidth(fonts[run.style], ' ', sizeOf(run.style));
        run.text += (gap ? ' ' : '') + piece.text;
      } else {
        if (run) emit(run);
        if (gap) at += space;
        run = { text: piece.text, style: piece.style, x: at };
      }
      at += widthOf(fonts, [piece]);
    }
  }
  if (run) emit(run);
}

function codeBlock(doc: PDFDocument, fonts: Fonts, cursor: Cursor, source: string[]): void {
  const perLine = Math.floor((WIDTH - 2 * CODE.pad) / textWidth(fonts.mono, '0', CODE.size));
  const lines = source.flatMap((line) => {
    const out: string[] = [];
    for (let at = 0; at < line.length || at === 0; at += perLine) out.push(line.slice(at, at + perLine));
    return out;
  });
  let index = 0;
  while (index < lines.length) {
    // Short blocks (a request, a JSON object) stay whole; long ones split, with at least three lines a page.
    const left = lines.length - index;
    ensure(doc, cursor, CODE.leading * (left <= 14 ? left : 3) + 2 * CODE.pad);
    const room = Math.floor((cursor.y - BOTTOM - 2 * CODE.pad) / CODE.leading);
    const chunk = lines.slice(index, index + Math.max(1, room));
    const height = chunk.length * CODE.leading + 2 * CODE.pad;
    cursor.page.drawRectangle({ x: MARGIN_X, y: cursor.y - height, width: WIDTH, height, color: CODE_BG });
    let y = cursor.y - CODE.pad - CODE.size;
    for (const line of chunk) {
      if (line)
        cursor.page.drawText(line, {
          x: MARGIN_X + CODE.pad,
          y,
          size: CODE.size,
          font: fonts.mono,
          color: INK,
        });
      y -= CODE.leading;
    }
    cursor.y -= height + 9;
    index += chunk.length;
  }
}
