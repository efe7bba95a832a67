/**
 * The site's search index (docs/site.md "Search"): Pagefind's static index of every endpoint, host, service and
 * task, as two bundles of files. `/pagefind/` holds the hosts, services and tasks, and Pagefind's own script and
 * wasm; `/pagefind-endpoints/` holds the endpoints. The search page searches the first alone, shows that answer,
 * then merges the second into it (Pagefind's `mergeIndex`, which reuses the first's wasm) and searches again. Why:
 * Pagefind's page list (`*.pf_meta`) is loaded whole before a first search, and grows about 5.2 bytes a page; at
 * 50,000 endpoints it is some 280 KB, so a host or a task would wait for every endpoint's entry. Files only, so it
 * works from a plain static host; only the search page loads script for it. The records are the build's own
 * (`site/lib/endpoint-pages.ts`), added as custom records, so no HTML is parsed again.
 *
 * A rebuild whose records (and Pagefind) are those of the build served now links that build's bundle instead of
 * indexing again (docs/site.md "Rebuilding after a crawl"): each bundle's `.records-hash` holds what it was built
 * from.
 */
import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as pagefind from 'pagefind';
import type { SearchRecord } from './endpoint-pages.ts';

const HASH_FILE = '.records-hash';

/** The two bundles' folders in the build: the first is searched first, the second merged into it. */
export const SEARCH_BUNDLES = { first: 'pagefind', endpoints: 'pagefind-endpoints' } as const;

/**
 * Writes the index of `records` into `<out>/pagefind/` (hosts, services, tasks) and `<out>/pagefind-endpoints/`
 * (endpoints); returns how many records they hold. With `previous` (the folder of the build served now), a bundle
 * built from the same records by the same Pagefind is linked from it.
 */
export async function writeSearchIndex(
  records: readonly SearchRecord[],
  out: string,
  previous: string | null = null,
): Promise<number> {
  const endpoints = records.filter((r) => r.kind === 'endpoint');
  const rest = records.filter((r) => r.kind !== 'endpoint');
  await writeBundle(rest, out, SEARCH_BUNDLES.first, previous);
  await writeBundle(endpoints, out, SEARCH_BUNDLES.endpoints, previous);
  return records.length;
}

/** One bundle into `<out>/<folder>/`, or linked from `<previous>/<folder>/` when built from the same records. */
async function writeBundle(
  records: readonly SearchRecord[],
  out: string,
  folder: string,
  previous: string | null,
): Promise<void> {
  const hash = await recordsHash(records);
  const before =
    previous === null ? null : await readFile(join(previous, folder, HASH_FILE), 'utf8').catch(() => null);
  if (
    hash !== null &&
    before === hash &&
    (await linkTree(join(previous as string, folder), join(out, folder)))
  )
    return;
  // Whatever a failed link left is removed first: Pagefind must never write through a link into the served build.
  await rm(join(out, folder), { recursive: true, force: true });
  await buildIndex(records, join(out, folder));
  if (hash !== null) await writeFile(join(out, folder, HASH_FILE), hash);
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

async function buildIndex(records: readonly SearchRecord[], folder: string): Promise<void> {
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
            // The kind is shown, never filtered on: a filter would only add a file per bundle.
            meta: { title: r.title, kind: r.kind },
          }),
        ),
      );
      const failed = answers.flatMap((a) => a.errors);
      if (failed.length > 0) throw new Error(`pagefind: ${failed.join('; ')}`);
    }
    const written = await index.writeFiles({ outputPath: folder });
    if (written.errors.length > 0) throw new Error(`pagefind: ${written.errors.join('; ')}`);
  } finally {
    await pagefind.close();
  }
}
