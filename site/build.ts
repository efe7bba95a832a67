/**
 * `npm run build:site`: builds the public site from the published crawl and bazaar runs into a new folder
 * `DATA_DIR/site-builds/<stamp>/`, then points `DATA_DIR/site` at it (a symlink replaced by rename, so the
 * running server switches at once, with no restart and never a half-built folder). The two newest builds
 * are kept; older ones are removed. Reads only published run folders and key files, never the database, so it
 * is safe while the server and a crawl run. See docs/site.md for the folder and the cache headers it expects.
 */
import { chmod, copyFile, link, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { build } from 'astro';
import { readConfig } from '../api/config.ts';
import { rulesDocument } from '../core/rules.ts';
import { headersFile } from '../core/site-cache.ts';
import { publishedRun, readIndex, SITE_INPUT_ENV, type SiteInput } from './lib/published.ts';

const ROOT = resolve(import.meta.dirname, '..');
const KEPT_BUILDS = 2;

export type SiteBuild = { dir: string; pages: number; ms: number; input: SiteInput };

/** Builds the site for `dataDir` and publishes it as `dataDir/site`. */
export async function buildSite(options: {
  dataDir: string;
  baseUrl: string;
  now?: Date;
}): Promise<SiteBuild> {
  const started = performance.now();
  const builtAt = (options.now ?? new Date()).toISOString();
  const input: SiteInput = {
    dataDir: options.dataDir,
    baseUrl: options.baseUrl,
    builtAt,
    crawlRun: await publishedRun(join(options.dataDir, 'crawl')),
    bazaarRun: await publishedRun(join(options.dataDir, 'bazaar')),
  };
  const builds = join(options.dataDir, 'site-builds');
  const name = `${builtAt.replace(/[-:.]/g, '')}-${process.pid}`;
  const out = join(builds, name);
  await mkdir(builds, { recursive: true });
  process.env[SITE_INPUT_ENV] = JSON.stringify(input);
  process.env.SPOTCHECK_SITE_OUT = out;
  process.env.SPOTCHECK_SITE_CACHE = `${out}.cache`;
  process.env.ASTRO_TELEMETRY_DISABLED = '1';
  try {
    await build({ root: ROOT, logLevel: process.env.SITE_BUILD_VERBOSE ? 'info' : 'warn' });
  } finally {
    await rm(`${out}.cache`, { recursive: true, force: true });
  }
  await copyJsonTwins(input, out);
  await writeFile(join(out, '_headers'), headersFile());
  await publish(options.dataDir, join('site-builds', name));
  await prune(builds, name);
  const pages = (await readdir(out, { recursive: true })).filter((f) => f.endsWith('.html')).length;
  return { dir: out, pages, ms: performance.now() - started, input };
}

/** The published files behind the JSON twins of the pages, byte for byte (hard links where possible). */
async function copyJsonTwins(input: SiteInput, out: string): Promise<void> {
  const put = async (from: string, to: string) => {
    await mkdir(dirname(join(out, to)), { recursive: true });
    await link(from, join(out, to)).catch(() => copyFile(from, join(out, to)));
  };
  // Copied, not linked: the key folder is private (0700/0600) and the copy must be world-readable.
  await mkdir(join(out, '.well-known'), { recursive: true });
  await copyFile(join(input.dataDir, 'keys', 'jwks.json'), join(out, '.well-known', 'jwks.json')).catch(
    () => undefined,
  );
  await chmod(join(out, '.well-known', 'jwks.json'), 0o644).catch(() => undefined);
  const crawl = input.crawlRun;
  if (crawl !== null) {
    const skips = await readdir(join(crawl.dir, 'skips'));
    for (const file of skips.filter((f) => /^\d+\.json$/.test(f)))
      await put(join(crawl.dir, 'skips', file), `v1/skips/${file}`);
    await put(join(crawl.dir, 'skips', '1.json'), 'v1/skips.json');
    for (const file of ['saves.json', 'stats.json', 'rules.json']) await put(join(crawl.dir, file), file);
  }
  if (input.bazaarRun !== null) await put(join(input.bazaarRun.dir, 'bazaar.json'), 'bazaar.json');
  // Before the first crawl, /rules.json is this code's rules document (the same source as the page).
  if (crawl === null)
    await writeFile(join(out, 'rules.json'), `${JSON.stringify(rulesDocument(), null, 2)}\n`);
  const done = new Set<string>();
  for (const run of [crawl, input.bazaarRun]) {
    if (run === null) continue;
    const ids = (await readIndex(run.dir).catch(() => []))
      .map((line) => line.id)
      .filter((id) => !done.has(id));
    for (let i = 0; i < ids.length; i += 64) {
      await Promise.all(
        ids.slice(i, i + 64).map((id) => put(join(run.dir, 'receipts', `${id}.json`), `receipts/${id}.json`)),
      );
    }
    for (const id of ids) done.add(id);
  }
}

/** Points `dataDir/site` at the new build: a new symlink renamed over the old one is atomic. */
async function publish(dataDir: string, target: string): Promise<void> {
  const tmp = join(dataDir, `site.${process.pid}.tmp`);
  await rm(tmp, { force: true });
  await symlink(target, tmp);
  await rename(tmp, join(dataDir, 'site'));
}

async function prune(builds: string, newest: string): Promise<void> {
  const names = (await readdir(builds)).filter((n) => !n.endsWith('.cache')).sort();
  const keep = new Set([...names.filter((n) => n !== newest).slice(-(KEPT_BUILDS - 1)), newest]);
  for (const n of names) if (!keep.has(n)) await rm(join(builds, n), { recursive: true, force: true });
}

if (import.meta.main) {
  const config = readConfig(process.env);
  const result = await buildSite({ dataDir: config.dataDir, baseUrl: config.baseUrl });
  const run = result.input.crawlRun?.runId ?? 'no published crawl yet';
  console.log(
    `[spotcheck] site built from ${run}: ${result.pages} pages in ${(result.ms / 1000).toFixed(1)} s`,
  );
  console.log(`[spotcheck] ${result.dir} (published as ${join(config.dataDir, 'site')})`);
  // For bench/site.ts: this process's peak resident memory (Astro builds in-process).
  if (process.env.SITE_BUILD_REPORT)
    console.log(`[spotcheck] peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
}
