/**
 * The receipts of the published runs, for their pages and the badges. Not a content collection: Astro bundles
 * its collections into the build, and 100,000 receipts would not fit. Pages get the file path only and read
 * their own receipt while they render, through the same valibot schema, so memory stays flat with the count.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ReceiptView, receiptView } from '../../core/format.ts';
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

/** What the page of one receipt file shows. */
export async function readReceiptView(file: string): Promise<ReceiptView> {
  return receiptView(await readReceipt(file));
}
