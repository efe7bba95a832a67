/**
 * Reads what the site is built from: the published crawl run named by `DATA_DIR/crawl/current.json`, the
 * published bazaar check, and the keys document. It reads `current.json` once and then only inside the run
 * folder it names (published folders never change), and never opens the server's database, so a build is safe
 * while the server and a crawl run.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as v from 'valibot';
import { CurrentPointer, parseFile } from './schemas.ts';

/** What `site/build.ts` hands the Astro build (through `SPOTCHECK_SITE_INPUT`). */
export type SiteInput = {
  dataDir: string;
  baseUrl: string;
  /** The build's clock: prebuilt badges are drawn as of this instant. */
  builtAt: string;
  /** The published crawl run folder, or null before the first crawl. */
  crawlRun: { runId: string; dir: string } | null;
  /** The published bazaar run folder, or null before the first check. */
  bazaarRun: { runId: string; dir: string } | null;
};

const SiteInputSchema = v.object({
  dataDir: v.string(),
  baseUrl: v.string(),
  builtAt: v.pipe(v.string(), v.isoTimestamp()),
  crawlRun: v.nullable(v.object({ runId: v.string(), dir: v.string() })),
  bazaarRun: v.nullable(v.object({ runId: v.string(), dir: v.string() })),
});

export const SITE_INPUT_ENV = 'SPOTCHECK_SITE_INPUT';

/** The input of this build; throws when the build was not started through `npm run build:site`. */
export function siteInput(): SiteInput {
  const text = process.env[SITE_INPUT_ENV];
  if (!text) throw new Error(`${SITE_INPUT_ENV} is not set: build the site with npm run build:site`);
  // Every page asks; parse once per input (a test may build twice in one process with different inputs).
  if (parsed?.text !== text)
    parsed = { text, input: parseFile(SiteInputSchema, JSON.parse(text), SITE_INPUT_ENV) };
  return parsed.input;
}

let parsed: { text: string; input: SiteInput } | null = null;

/** The run folder `<dir>/current.json` points at, or null when nothing is published there yet. */
export async function publishedRun(dir: string): Promise<{ runId: string; dir: string } | null> {
  const file = join(dir, 'current.json');
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) return null;
  const pointer = parseFile(CurrentPointer, JSON.parse(text), file);
  return { runId: pointer.run_id, dir: join(dir, pointer.path) };
}

/** Reads and checks one JSON file of a run. */
export async function readRunFile<S extends v.GenericSchema>(
  dir: string,
  name: string,
  schema: S,
): Promise<v.InferOutput<S>> {
  const file = join(dir, name);
  return parseFile(schema, JSON.parse(await readFile(file, 'utf8')), file);
}

/** One line of `receipts.ndjson`. */
export const IndexLine = v.looseObject({
  id: v.pipe(v.string(), v.regex(/^(?:sc|ps)-[a-z2-7]{26}$/)),
  short_id: v.string(),
  url: v.string(),
  host: v.string(),
  method: v.string(),
  issued_at: v.string(),
  verdict: v.string(),
  reason: v.string(),
});
export type IndexLine = v.InferOutput<typeof IndexLine>;

/**
 * Streams the receipt index of a run to `visit`, line by line in file order, each line checked. The index of a
 * 100,000-receipt run is about 94 MB: read whole and parsed at once it held several hundred MB (BENCHMARKS.md at
 * 6d8da5c, §6), so callers keep only the members they use.
 */
export async function eachIndexLine(dir: string, visit: (line: IndexLine) => void): Promise<void> {
  const file = join(dir, 'receipts.ndjson');
  const lines = createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    visit(parseFile(IndexLine, JSON.parse(line), `${file}:${n}`));
  }
}
