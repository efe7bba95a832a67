/**
 * The site's search index (docs/site.md "Search"): Pagefind's static index of every endpoint, host, service and
 * task, written into the build's `/pagefind/` folder with Pagefind's own search script and UI. It is files only, so
 * it works from a plain static host; the search page (`/search/`) loads it in the browser, and only that page
 * loads script for it. The records are the build's own (`site/lib/endpoint-pages.ts`), added as custom records, so
 * no HTML is parsed again, whatever the number of receipt pages.
 *
 * A rebuild whose records (and Pagefind) are those of the build served now links that build's index instead of
 * indexing again (docs/site.md "Rebuilding after a crawl"): `pagefind/.records-hash` holds what it was built from.
 */
import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as pagefind from 'pagefind';
import type { SearchRecord } from './endpoint-pages.ts';

const HASH_FILE = '.records-hash';

/**
 * Writes the index of `records` into `<out>/pagefind/`; returns how many records it holds. With `previous` (the
 * folder of the build served now), an index built from the same records by the same Pagefind is linked from it.
 */
export async function writeSearchIndex(
  records: readonly SearchRecord[],
  out: string,
  previous: string | null = null,
): Promise<number> {
  const hash = await recordsHash(records);
  const before =
    previous === null
      ? null
      : await readFile(join(previous, 'pagefind', HASH_FILE), 'utf8').catch(() => null);
  if (
    hash !== null &&
    before === hash &&
    (await linkTree(join(previous as string, 'pagefind'), join(out, 'pagefind')))
  )
    return records.length;
  // Whatever a failed link left is removed first: Pagefind must never write through a link into the served build.
  await rm(join(out, 'pagefind'), { recursive: true, force: true });
  await buildIndex(records, out);
  if (hash !== null) await writeFile(join(out, 'pagefind', HASH_FILE), hash);
  return records.length;
}

/** SHA-256 of Pagefind's version and the records in order; null when the version cannot be read (no reuse). */
async function recordsHash(records: readonly SearchRecord[]): Promise<string | null> {
  const manifest = await readFile(new URL('../package.json', import.meta.resolve('pagefind')), 'utf8').catch(
    () => null,
  );
  const version = manifest === null ? null : (JSON.parse(manifest) as { name?: unknown; version?: unknown });
  if (version?.name !== 'pagefind' || typeof version.version !== 'string') return null;
  const hash = createHash('sha256').update(`pagefind ${version.version}\n`);
  for (const r of records) hash.update(`${JSON.stringify([r.url, r.kind, r.title, r.content])}\n`);
  return hash.digest('base64url');
}

/** Hard-links (or copies, across file systems) every file of `from` into `to`; false when `from` cannot be read. */
async function linkTree(from: string, to: string): Promise<boolean> {
  const entries = await readdir(from, { recursive: true, withFileTypes: true }).catch(() => null);
  if (entries === null) return false;
  try {
    await mkdir(to, { recursive: true });
    for (const entry of entries) {
      const rel = join(entry.parentPath, entry.name).slice(from.length + 1);
      if (entry.isDirectory()) await mkdir(join(to, rel), { recursive: true });
      else if (entry.isFile())
        await link(join(from, rel), join(to, rel)).catch(() => copyFile(join(from, rel), join(to, rel)));
    }
    return true;
  } catch {
    return false;
  }
}

async function buildIndex(records: readonly SearchRecord[], out: string): Promise<void> {
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
}
