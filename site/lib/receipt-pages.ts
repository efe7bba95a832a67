/**
 * The receipt pages (`/receipts/<id>/`) and raw signed files (`/receipts/<id>.json`), written by `npm run build:site`
 * outside Astro's page pipeline (docs/decisions.md "Receipt pages from one shell"): Astro renders the page's shell
 * once (`site/pages/receipts/[id].astro`, the frame every page shares, with slots), and each receipt fills the slots
 * with its own facts. A receipt is read from its file, checked against the same valibot schema as every input,
 * formatted by `core/format.ts` `receiptView`, written, and dropped: memory stays flat with the count.
 *
 * Which receipts get a page (docs/site.md "Which receipts have a page"): every receipt of the published crawl run
 * and of the published bazaar check, and every receipt a published save refers to (the saves list spans the runs of
 * 30 days), so no link on the site points at a missing page.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeXml, type Fact, type ReceiptView, receiptView } from '../../core/format.ts';
import { receiptFilePath } from './links.ts';
import { eachIndexLine, readRunFile, type SiteInput } from './published.ts';
import { receiptFile } from './receipts.ts';
import { parseFile, Receipt, Saves } from './schemas.ts';

/** The id the shell page is rendered under (`/receipts/<SHELL_ID>/`, replaced by the receipt pages). */
export const SHELL_ID = 'receipt-page-shell';

/** The slots of the shell, as the Astro page writes them (letters and underscores survive any escaping). */
export const SLOTS = {
  title: '__SC_SLOT_TITLE__',
  description: '__SC_SLOT_DESCRIPTION__',
  body: '__SC_SLOT_BODY__',
} as const;
type Slot = keyof typeof SLOTS;

/** Where one receipt of the build comes from: its file in a run folder, or the signed copy inside a save. */
export type ReceiptSource = { id: string; file: string } | { id: string; copy: Record<string, unknown> };

/** Every receipt that gets a page, once each, in index order (crawl run, bazaar check, then earlier saves). */
export async function receiptSources(input: SiteInput): Promise<ReceiptSource[]> {
  const seen = new Set<string>();
  const out: ReceiptSource[] = [];
  const add = (source: ReceiptSource) => {
    if (seen.has(source.id)) return;
    seen.add(source.id);
    out.push(source);
  };
  for (const run of [input.crawlRun, input.bazaarRun]) {
    if (run === null) continue;
    await eachIndexLine(run.dir, (line) => add({ id: line.id, file: receiptFile(run.dir, line.id) }));
  }
  if (input.crawlRun !== null) {
    const runs = join(input.crawlRun.dir, '..');
    for (const save of (await readRunFile(input.crawlRun.dir, 'saves.json', Saves)).saves) {
      const copy = save.receipt;
      if (copy === undefined || seen.has(copy.id)) continue;
      // The earlier run's file while its folder is kept (byte for byte), else the copy the save carries.
      const file = save.run_id === undefined ? null : receiptFile(join(runs, save.run_id), copy.id);
      add(file !== null && existsSync(file) ? { id: copy.id, file } : { id: copy.id, copy });
    }
  }
  return out;
}

/**
 * Writes the raw file and the page of every receipt into `dir` (the build's `receipts/` folder), filling the shell
 * (`shell` settles with its HTML); returns how many. Folders and raw files first, then the pages: a caller may start
 * it before the shell is written.
 */
export async function writeReceiptPages(
  input: SiteInput,
  dir: string,
  shell: Promise<string>,
): Promise<number> {
  const sources = await receiptSources(input);
  mkdirSync(dir, { recursive: true });
  // Synchronous calls, one receipt after another: on this disk, 64 at once through the thread pool was no faster
  // and cost more CPU (bench/site.ts; BENCHMARKS.md at 6d8da5c, §6).
  for (const source of sources) {
    mkdirSync(join(dir, source.id));
    const raw = join(dir, `${source.id}.json`);
    if ('file' in source) hardLinkOrCopy(source.file, raw);
    else writeFileSync(raw, `${JSON.stringify(source.copy, null, 2)}\n`);
  }
  const parts = parseShell(await shell);
  for (const source of sources) {
    const receipt =
      'file' in source
        ? parseFile(Receipt, JSON.parse(readFileSync(source.file, 'utf8')), source.file)
        : parseFile(Receipt, source.copy, `the save of ${source.id}`);
    writeFileSync(
      join(dir, source.id, 'index.html'),
      receiptPage(parts, receiptView(receipt), input.baseUrl),
    );
  }
  return sources.length;
}

/** The shell cut at its slots: literal text at even positions, slot names at odd ones. */
export function parseShell(html: string): string[] {
  const parts = html.split(/__SC_SLOT_([A-Z]+)__/);
  const names = parts.filter((_, i) => i % 2 === 1);
  for (const slot of Object.keys(SLOTS))
    if (!names.includes(slot.toUpperCase())) throw new Error(`the receipt page shell has no ${slot} slot`);
  return parts.map((part, i) => (i % 2 === 1 ? part.toLowerCase() : part));
}

/** One receipt's page: the shell with its slots filled (text escaped; the body is built escaped). */
export function receiptPage(shell: readonly string[], view: ReceiptView, baseUrl: string): string {
  const values: Record<Slot, string> = {
    title: escapeXml(`Receipt ${view.id}`),
    description: escapeXml(`${view.verdict}: ${view.why}`),
    body: receiptBody(view, baseUrl),
  };
  let html = '';
  for (let i = 0; i < shell.length; i++) html += i % 2 === 1 ? values[shell[i] as Slot] : shell[i];
  return html;
}

/** What a receipt page says: the decision and why, the terms, the signature and kid, the raw file, the verifier. */
function receiptBody(view: ReceiptView, baseUrl: string): string {
  const e = escapeXml;
  const file = receiptFilePath(view.id);
  const permalink = `${baseUrl}/v1/receipts/${view.id}`;
  const signed = view.signed
    ? 'The signature covers the RFC 8785 canonical JSON of the receipt without its signature member.'
    : 'This receipt is unsigned (issued before receipts were signed).';
  return [
    `<h1>Receipt <code>${e(view.id)}</code></h1>`,
    `<p class="code">${e(view.title)}</p>`,
    `<p>Decision: <span class="v-${e(view.verdict)}">${e(view.verdict)}</span>. ${e(view.why)}</p>`,
    `<h2>Decision</h2>${facts(view.decision)}`,
    `<h2>Payment terms</h2>${facts(view.terms)}`,
    `<h2>Signature</h2>${facts(view.signature)}`,
    `<p>${signed}</p>`,
    `<ul><li><a href="${e(file)}">The raw signed receipt (JSON)</a>, also at <a href="${e(permalink)}">${e(permalink)}</a></li>`,
    `<li><a href="/verify/?receipt=${e(encodeURIComponent(file))}">Verify this receipt in your browser</a></li></ul>`,
    view.badgeMarkdown === null
      ? ''
      : `<h2>Badge snippet</h2><pre class="code">${e(view.badgeMarkdown)}</pre>`,
  ].join('');
}

/** A list of labelled facts, as `site/components/Facts.astro` draws them. */
function facts(list: readonly Fact[]): string {
  const items = list.map(
    (f) =>
      `<dt>${escapeXml(f.label)}</dt><dd>${f.code ? `<code>${escapeXml(f.value)}</code>` : escapeXml(f.value)}</dd>`,
  );
  return `<dl class="facts">${items.join('')}</dl>`;
}

/** Published receipt files never change, so the build links them (a copy across devices). */
function hardLinkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    writeFileSync(to, readFileSync(from));
  }
}
