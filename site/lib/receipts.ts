/**
 * The receipts of the published runs, for the badges. Not a content collection: Astro bundles its collections into
 * the build, and 100,000 receipts would not fit. Receipt pages are written by `site/lib/receipt-pages.ts`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eachIndexLine, type SiteInput } from './published.ts';
import { parseFile, Receipt } from './schemas.ts';

/** What a badge needs of one indexed receipt. */
export type IndexedReceipt = { id: string; url: string; issued_at: string; runDir: string };

/** A host's receipts: how many, and the `kept` newest (newest first; ties in index order). */
export type HostReceipts = { endpoints: number; newest: IndexedReceipt[] };

/**
 * Every host of the crawl run and the bazaar check with its receipts (each receipt once, from the runs'
 * `receipts.ndjson`). Only the `kept` newest of a host are held, so memory follows the hosts, not the receipts.
 */
export async function receiptsByHost(input: SiteInput, kept: number): Promise<Map<string, HostReceipts>> {
  const seen = new Set<string>();
  const hosts = new Map<string, HostReceipts>();
  for (const run of [input.crawlRun, input.bazaarRun]) {
    if (run === null) continue;
    await eachIndexLine(run.dir, (line) => {
      if (seen.has(line.id)) return;
      seen.add(line.id);
      let host = hosts.get(line.host);
      if (host === undefined) {
        host = { endpoints: 0, newest: [] };
        hosts.set(line.host, host);
      }
      host.endpoints++;
      host.newest.push({ id: line.id, url: line.url, issued_at: line.issued_at, runDir: run.dir });
      if (host.newest.length >= 2 * kept) host.newest = newestFirst(host.newest, kept);
    });
  }
  for (const host of hosts.values()) host.newest = newestFirst(host.newest, kept);
  return hosts;
}

function newestFirst(list: IndexedReceipt[], kept: number): IndexedReceipt[] {
  return list
    .sort((a, b) => (a.issued_at < b.issued_at ? 1 : a.issued_at > b.issued_at ? -1 : 0))
    .slice(0, kept);
}

/** The file of receipt `id` in a run folder. */
export function receiptFile(runDir: string, id: string): string {
  return join(runDir, 'receipts', `${id}.json`);
}

/** One receipt file, checked against the schema. */
export async function readReceipt(file: string): Promise<Record<string, unknown>> {
  return parseFile(Receipt, JSON.parse(await readFile(file, 'utf8')), file);
}
