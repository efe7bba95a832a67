/**
 * The receipt index of each run of the window, as the endpoint history reads it, kept between builds
 * (`DATA_DIR/site-builds/.history-cache/`): a published run never changes, so a rebuild after a crawl parses and
 * checks only the new run's index line by line, and reads each earlier run's members in one JSON parse. Each file
 * holds the members `site/lib/endpoint-history.ts` uses, for the lines of one run in file order, and the size and
 * time of the index it came from; a file that does not match its index, or cannot be read, is as none, and is
 * written again. Written under a temporary name and renamed, so two builds at once read whole files.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { eachIndexLine, type IndexLine } from './published.ts';

/** The members of an index line kept, in this order in each cached line. */
const MEMBERS = [
  'id',
  'short_id',
  'url',
  'host',
  'method',
  'issued_at',
  'verdict',
  'reason',
  'url_norm',
  'quoted_price_usd',
  'pay_to',
  'network',
  'receipt_url',
  'source_list',
  'also_listed_in',
  'listed_price_usd',
  'listed_pay_to',
  'listed_network',
  'disputed',
] as const;

type CacheFile = { schema: 1; members: readonly string[]; size: number; mtimeMs: number; lines: unknown[][] };

/** The cache file of the run folder `dir` (`<kind>/runs/<run_id>`). */
function cacheFile(cacheDir: string, dir: string): string {
  return join(cacheDir, `${basename(dirname(dirname(dir)))}-${basename(dir)}.json`);
}

/**
 * Visits the lines of `dir`'s receipt index in file order, from the cache when it matches the index, else from the
 * index (each line checked, as `eachIndexLine` does), writing the cache as it goes. A line from the cache holds the
 * members above (absent ones as null, which the history reads as absent).
 */
export async function eachCachedIndexLine(
  dir: string,
  cacheDir: string,
  visit: (line: IndexLine & Record<string, unknown>) => void,
): Promise<void> {
  const index = statSync(join(dir, 'receipts.ndjson'));
  // To the millisecond, as a file's time can be set back.
  const mtimeMs = Math.round(index.mtimeMs);
  const file = cacheFile(cacheDir, dir);
  const cached = readCache(file, index.size, mtimeMs);
  if (cached !== null) {
    for (const values of cached) {
      const line: Record<string, unknown> = {};
      for (let i = 0; i < MEMBERS.length; i++) line[MEMBERS[i] as string] = values[i] ?? null;
      visit(line as IndexLine & Record<string, unknown>);
    }
    return;
  }
  const lines: unknown[][] = [];
  await eachIndexLine(dir, (line) => {
    const all = line as Record<string, unknown>;
    lines.push(MEMBERS.map((m) => all[m] ?? null));
    visit(line as IndexLine & Record<string, unknown>);
  });
  const body: CacheFile = { schema: 1, members: MEMBERS, size: index.size, mtimeMs, lines };
  try {
    mkdirSync(cacheDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(body));
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written is read from the index next time.
  }
}

function readCache(file: string, size: number, mtimeMs: number): unknown[][] | null {
  try {
    const body = JSON.parse(readFileSync(file, 'utf8')) as Partial<CacheFile>;
    if (
      body.schema !== 1 ||
      body.size !== size ||
      body.mtimeMs !== mtimeMs ||
      JSON.stringify(body.members) !== JSON.stringify(MEMBERS) ||
      !Array.isArray(body.lines)
    )
      return null;
    return body.lines;
  } catch {
    return null;
  }
}

/** Removes the cache files of runs other than `dirs` (runs that left the window). */
export function pruneHistoryCache(cacheDir: string, dirs: readonly string[]): void {
  const keep = new Set(dirs.map((d) => basename(cacheFile(cacheDir, d))));
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return;
  }
  for (const name of names)
    if (name.endsWith('.json') && !keep.has(name)) rmSync(join(cacheDir, name), { force: true });
}
