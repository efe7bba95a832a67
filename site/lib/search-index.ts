/**
 * The site's search index (docs/site.md "Search"): Pagefind's static index of every endpoint, host, service and
 * task, written into the build's `/pagefind/` folder with Pagefind's own search script and UI. It is files only, so
 * it works from a plain static host; the search page (`/search/`) loads it in the browser, and only that page
 * loads script for it. The records are the build's own (`site/lib/endpoint-pages.ts`), added as custom records, so
 * no HTML is parsed again, whatever the number of receipt pages.
 */
import * as pagefind from 'pagefind';
import type { SearchRecord } from './endpoint-pages.ts';

/** Writes the index of `records` into `<out>/pagefind/`; returns how many records it holds. */
export async function writeSearchIndex(records: readonly SearchRecord[], out: string): Promise<number> {
  const { index, errors } = await pagefind.createIndex({ forceLanguage: 'en' });
  if (index === undefined) throw new Error(`pagefind: ${errors.join('; ')}`);
  try {
    // In batches: the records go to Pagefind's process over a pipe, and waiting for each one is slow.
    const BATCH = 256;
    for (let i = 0; i < records.length; i += BATCH) {
      const answers = await Promise.all(
        records.slice(i, i + BATCH).map((r) =>
          index.addCustomRecord({
            url: r.url,
            content: r.content,
            language: 'en',
            meta: { title: r.title, kind: r.kind },
            filters: { kind: [r.kind] },
          }),
        ),
      );
      const failed = answers.flatMap((a) => a.errors);
      if (failed.length > 0) throw new Error(`pagefind: ${failed.join('; ')}`);
    }
    const written = await index.writeFiles({ outputPath: `${out}/pagefind` });
    if (written.errors.length > 0) throw new Error(`pagefind: ${written.errors.join('; ')}`);
  } finally {
    await pagefind.close();
  }
  return records.length;
}
