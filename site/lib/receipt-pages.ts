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
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { endpointKey, endpointKeyOfUrl } from '../../core/endpoint-paths.ts';
import { receiptView } from '../../core/format.ts';
import { parseShell, receiptPage } from '../../core/page-shell.ts';
import { receiptFilePath } from './links.ts';
import { writeOwnFile } from './page-writer.ts';
import { eachIndexLine, readRunFile, type SiteInput } from './published.ts';
import { receiptFile } from './receipts.ts';
import { parseFile, Receipt, Saves } from './schemas.ts';

/** The id the shell page is rendered under (`/receipts/<SHELL_ID>/`, replaced by the receipt pages). */
export const SHELL_ID = 'receipt-page-shell';

/**
 * Where one receipt of the build comes from: its file in a run folder, or the signed copy inside a save; `endpoint`
 * is the key of its endpoint's page (`core/endpoint-paths.ts`), null when its URL does not parse.
 */
export type ReceiptPageSource =
  | { id: string; file: string; endpoint: string | null }
  | { id: string; copy: Record<string, unknown>; endpoint: string | null };

/** Every receipt that gets a page, once each, in index order (crawl run, bazaar check, then earlier saves). */
export async function receiptPageSources(input: SiteInput): Promise<ReceiptPageSource[]> {
  const seen = new Set<string>();
  const out: ReceiptPageSource[] = [];
  const add = (source: ReceiptPageSource) => {
    if (seen.has(source.id)) return;
    seen.add(source.id);
    out.push(source);
  };
  for (const run of [input.crawlRun, input.bazaarRun]) {
    if (run === null) continue;
    await eachIndexLine(run.dir, (line) => {
      const urlNorm = (line as { url_norm?: unknown }).url_norm;
      const endpoint =
        typeof urlNorm === 'string'
          ? endpointKey(urlNorm, line.method)
          : endpointKeyOfUrl(line.url, line.method);
      add({ id: line.id, file: receiptFile(run.dir, line.id), endpoint });
    });
  }
  if (input.crawlRun !== null) {
    const runs = join(input.crawlRun.dir, '..');
    for (const save of (await readRunFile(input.crawlRun.dir, 'saves.json', Saves)).saves) {
      const copy = save.receipt;
      if (copy === undefined || seen.has(copy.id)) continue;
      // The earlier run's file while its folder is kept (byte for byte), else the copy the save carries.
      const file = save.run_id === undefined ? null : receiptFile(join(runs, save.run_id), copy.id);
      const endpoint = endpointKeyOfUrl(save.url, save.method);
      add(
        file !== null && existsSync(file) ? { id: copy.id, file, endpoint } : { id: copy.id, copy, endpoint },
      );
    }
  }
  return out;
}

/**
 * Writes the raw file and the page of every receipt into `dir` (the build's `receipts/` folder), filling the shell
 * (`shell` settles with its HTML); returns how many. Folders and raw files first, then the pages: a caller may start
 * it before the shell is written.
 *
 * With `recycled` (the `receipts/` folder of an unkept build, `site/build.ts`), that folder becomes `dir` and its
 * folders and page files are reused: a receipt's folder is its own when it had a page then, else one of a receipt
 * that has none now, renamed; on this disk creating a file or folder costs 10 to 20 times renaming or writing over
 * one (`site/lib/page-writer.ts`). The raw files are linked afresh, and what no receipt took is removed.
 */
export async function writeReceiptPages(
  input: SiteInput,
  dir: string,
  shell: Promise<string>,
  recycled: string | null = null,
): Promise<number> {
  const sources = await receiptPageSources(input);
  const old = recycled !== null && existsSync(recycled) ? recycledFolders(recycled, dir, sources) : null;
  mkdirSync(dir, { recursive: true });
  // Synchronous calls, one receipt after another: on this disk, 64 at once through the thread pool was no faster
  // and cost more CPU (bench/site.ts; BENCHMARKS.md at 6d8da5c, §6).
  for (const source of sources) {
    const own = join(dir, source.id);
    if (old === null || !old.kept.has(source.id)) {
      const spare = old?.spare.pop();
      if (spare === undefined) mkdirSync(own);
      else renameSync(join(dir, spare), own);
    }
    const raw = join(dir, `${source.id}.json`);
    if ('file' in source) hardLinkOrCopy(source.file, raw);
    else writeFileSync(raw, `${JSON.stringify(source.copy, null, 2)}\n`);
  }
  for (const spare of old?.spare ?? []) rmSync(join(dir, spare), { recursive: true, force: true });
  const parts = parseShell(await shell);
  for (const source of sources) {
    const receipt =
      'file' in source
        ? parseFile(Receipt, JSON.parse(readFileSync(source.file, 'utf8')), source.file)
        : parseFile(Receipt, source.copy, `the save of ${source.id}`);
    writeOwnFile(
      join(dir, source.id, 'index.html'),
      Buffer.from(
        receiptPage(parts, receiptView(receipt), {
          baseUrl: input.baseUrl,
          raw: receiptFilePath(source.id),
          endpoint: source.endpoint,
        }),
        'utf8',
      ),
      old !== null,
    );
  }
  return sources.length;
}

/**
 * Moves the recycled `receipts/` folder to `dir` and sorts what it holds: the folders of receipts that have a page
 * now (`kept`) and those of others (`spare`, to be renamed); every raw file is removed (they are linked afresh, and
 * one may be a link to a run's file, never to be written through), and anything else.
 */
function recycledFolders(
  recycled: string,
  dir: string,
  sources: readonly ReceiptPageSource[],
): { kept: Set<string>; spare: string[] } {
  renameSync(recycled, dir);
  const ids = new Set(sources.map((s) => s.id));
  const kept = new Set<string>();
  const spare: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && ids.has(entry.name)) kept.add(entry.name);
    else if (entry.isDirectory() && entry.name !== SHELL_ID) spare.push(entry.name);
    else rmSync(join(dir, entry.name), { recursive: true, force: true });
  }
  return { kept, spare };
}

/** Published receipt files never change, so the build links them (a copy across devices). */
function hardLinkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    writeFileSync(to, readFileSync(from));
  }
}
