/**
 * The receipts of the published runs, for the badges. Not a content collection: Astro bundles its collections into
 * the build, and 100,000 receipts would not fit. Receipt pages are written by `site/lib/receipt-pages.ts`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type IndexLine, readIndex, type SiteInput } from './published.ts';
import { parseFile, Receipt } from './schemas.ts';

export type IndexedReceipt = IndexLine & { file: string };

/** Every receipt of the crawl run and the bazaar check, once each, from their `receipts.ndjson`. */
export async function indexedReceipts(input: SiteInput): Promise<IndexedReceipt[]> {
  const seen = new Set<string>();
  const out: IndexedReceipt[] = [];
  for (const run of [input.crawlRun, input.bazaarRun]) {
    if (run === null) continue;
    for (const line of await readIndex(run.dir)) {
      if (seen.has(line.id)) continue;
      seen.add(line.id);
      out.push({ ...line, file: join(run.dir, 'receipts', `${line.id}.json`) });
    }
  }
  return out;
}

/** One receipt file, checked against the schema. */
export async function readReceipt(file: string): Promise<Record<string, unknown>> {
  return parseFile(Receipt, JSON.parse(await readFile(file, 'utf8')), file);
}
