/**
 * `npm run build:site`: builds the public site from the published crawl and bazaar runs and publishes it as
 * `DATA_DIR/site`. Safe beside the server, a crawl and another build (docs/site.md "Builds side by side"):
 *
 * - each build has its own scratch folder `site-builds/.<name>.work/` (Astro's root, `.astro/`, caches) and writes
 *   into its own staging folder `site-builds/.<name>.staging/`; nothing is written into the repository;
 * - the staging folder is renamed to `site-builds/<name>/` only when complete, then `DATA_DIR/site`, a symlink, is
 *   replaced by a rename, so the server (which resolves the link per request) switches at once, without a restart,
 *   and never sees half a build; a build never replaces a newer one that finished first;
 * - the two newest builds are kept; older ones and the scratch folders of dead builds are removed.
 *
 * It reads only published run folders and key files, never the database.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import {
  chmod,
  copyFile,
  cp,
  link,
  mkdir,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import * as v from 'valibot';
import { PAGE_SHELL_FILE, parseShell } from '../core/page-shell.ts';
import { rulesDocument } from '../core/rules.ts';
import { headersFile } from '../core/site-cache.ts';
import { readEnv, SHARED_ENV, sharedConfigOf } from '../io/environment.ts';
import { isProcessAlive } from '../io/process-alive.ts';
import { readSiteHistory } from './lib/endpoint-history.ts';
import { writeEndpointPages } from './lib/endpoint-pages.ts';
import { publishedRun, SITE_INPUT_ENV, type SiteInput } from './lib/published.ts';
import { SHELL_ID, writeReceiptPages } from './lib/receipt-pages.ts';
import { writeSearchIndex } from './lib/search-index.ts';

const ROOT = resolve(import.meta.dirname, '..');
const KEPT_BUILDS = 2;
/** What the site's sources import from outside `site/`, linked into each build's scratch folder. */
const SHARED = ['core', 'io', 'verify', 'node_modules'];
/** A finished build's folder name: the build's start, to the millisecond, and its process id. */
const BUILD_NAME = /^\d{8}T\d{9}Z-\d+$/;

export type SiteBuild = {
  dir: string;
  /** Pages Astro rendered, and receipt pages written from the shell. */
  pages: number;
  receipts: number;
  /** Endpoint, host and task pages written from the history of the window, and the records of the search index. */
  endpoints: {
    endpoints: number;
    hosts: number;
    tasks: number;
    searchRecords: number;
    /** Files of those pages written, and kept unchanged from the build served before (linked, not written). */
    written: number;
    kept: number;
  };
  /** False when a newer build had already been published (this one is kept but not served). */
  published: boolean;
  ms: number;
  /** Milliseconds per phase (astro, receipt pages, json twins), for bench/site.ts. */
  phases: Record<string, number>;
  input: SiteInput;
};

/** Builds the site for `dataDir` and publishes it as `dataDir/site`. */
export async function buildSite(options: {
  dataDir: string;
  baseUrl: string;
  now?: Date;
  /** Called with a line as each phase starts and ends (`npm run build:site` prints them). */
  progress?: (line: string) => void;
}): Promise<SiteBuild> {
  const started = performance.now();
  const dataDir = resolve(options.dataDir);
  const builtAt = (options.now ?? new Date()).toISOString();
  const input: SiteInput = {
    dataDir,
    baseUrl: options.baseUrl,
    builtAt,
    crawlRun: await publishedRun(join(dataDir, 'crawl')),
    bazaarRun: await publishedRun(join(dataDir, 'bazaar')),
  };
  const builds = join(dataDir, 'site-builds');
  const name = `${builtAt.replace(/[-:.]/g, '')}-${process.pid}`;
  const stage = join(builds, `.${name}.staging`);
  const work = join(builds, `.${name}.work`);
  const out = join(builds, name);
  await mkdir(work, { recursive: true });
  let pages: number;
  let receipts: number;
  let endpoints: SiteBuild['endpoints'];
  const phases: Record<string, number> = {};
  const timed = async <T>(phase: string, run: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    options.progress?.(`${phase}…`);
    const result = await run();
    phases[phase] = Math.round(performance.now() - t);
    options.progress?.(`${phase}: done in ${(phases[phase] / 1000).toFixed(1)} s`);
    return result;
  };
  // The build served now: pages whose bytes have not changed are linked from it (site/lib/page-writer.ts).
  const previous = await realpath(join(dataDir, 'site')).catch(() => null);
  try {
    // One after the other: Astro's process has exited (and given back its memory) before the receipt pages start.
    pages = await timed('astro', () => astroBuild(input, stage, work));
    const shell = readFile(join(stage, 'receipts', SHELL_ID, 'index.html'), 'utf8');
    receipts = await timed('receipt pages', () => writeReceiptPages(input, join(work, 'receipts'), shell));
    await rm(join(stage, 'receipts'), { recursive: true, force: true });
    await rename(join(work, 'receipts'), join(stage, 'receipts'));
    // Every run of the window is read once and grouped by endpoint; the pages are written from the groups.
    const history = await timed('history', () => readSiteHistory(input));
    const parts = parseShell(await shell);
    // The server fills the same shell for receipts issued after this build and for a browser's error pages.
    await writeFile(join(stage, PAGE_SHELL_FILE), await shell);
    const written = await timed('endpoint pages', async () =>
      writeEndpointPages(history, stage, parts, input.baseUrl, previous),
    );
    const searchRecords = await timed('search index', () =>
      writeSearchIndex(written.records, stage, previous),
    );
    endpoints = {
      endpoints: written.endpoints,
      hosts: written.hosts,
      tasks: written.tasks,
      searchRecords,
      ...written.files,
    };
    await timed('json twins', () => copyJsonTwins(input, stage));
    await writeFile(join(stage, '_headers'), headersFile());
    await rename(stage, out);
  } finally {
    await rm(work, { recursive: true, force: true });
    await rm(stage, { recursive: true, force: true });
  }
  const published = await publish(dataDir, name);
  await timed('prune', () => prune(builds));
  return { dir: out, pages, receipts, endpoints, published, ms: performance.now() - started, phases, input };
}

/**
 * Runs Astro (`site/astro-build.mjs`, in its own process) with its root and working directory in the build's own
 * scratch folder: Astro puts `.astro/` under its root and, for an output folder outside the working directory,
 * `.astro/.prerender/` under the working directory. The scratch folder holds a copy of `site/` (Astro wants its
 * sources inside its root) and links to the code and packages they import.
 */
async function astroBuild(input: SiteInput, stage: string, work: string): Promise<number> {
  await cp(join(ROOT, 'site'), join(work, 'site'), { recursive: true });
  for (const dir of SHARED) await symlink(join(ROOT, dir), join(work, dir), 'dir');
  const env = {
    ...process.env,
    [SITE_INPUT_ENV]: JSON.stringify(input),
    SPOTCHECK_SITE_ROOT: work,
    SPOTCHECK_SITE_OUT: stage,
    SPOTCHECK_SITE_CACHE: join(work, 'cache'),
    ASTRO_TELEMETRY_DISABLED: '1',
  };
  const child = spawn(process.execPath, [join(ROOT, 'site', 'astro-build.mjs')], {
    cwd: work,
    env,
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', done);
  });
  if (code !== 0) throw new Error(`the Astro build failed (exit ${code})`);
  return (await readdir(stage, { recursive: true })).filter((f) => f.endsWith('.html')).length;
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
}

/**
 * Points `dataDir/site` at `site-builds/<name>`: a new symlink renamed over the old one is atomic. A build that
 * finishes after a newer one (both started from the runs published when they began) leaves the newer one served.
 */
async function publish(dataDir: string, name: string): Promise<boolean> {
  const site = join(dataDir, 'site');
  const served = await readlink(site).catch(() => null);
  if (served !== null && BUILD_NAME.test(basename(served)) && basename(served) > name) return false;
  const tmp = join(dataDir, `site.${process.pid}.tmp`);
  await rm(tmp, { force: true });
  await symlink(join('site-builds', name), tmp);
  await rename(tmp, site);
  return true;
}

/**
 * Keeps the newest finished builds; removes older ones and the scratch folders of builds no longer running.
 * Synchronously: `fs.promises.rm` of a 100,000-receipt build (300,000 entries) held about 620 MB, `rmSync` 80 MB in
 * about the same time (BENCHMARKS.md at 6d8da5c, §6), and nothing else runs in this process by then.
 */
async function prune(builds: string): Promise<void> {
  const names = await readdir(builds);
  const finished = names.filter((n) => BUILD_NAME.test(n)).sort();
  for (const n of finished.slice(0, -KEPT_BUILDS)) rmSync(join(builds, n), { recursive: true, force: true });
  for (const n of names) {
    const pid = /^\.\d{8}T\d{9}Z-(\d+)\.(?:work|staging)$/.exec(n)?.[1];
    if (pid !== undefined && !isProcessAlive(Number(pid)))
      rmSync(join(builds, n), { recursive: true, force: true });
  }
}

if (import.meta.main) {
  // The variables the server and the crawl share (`DATA_DIR`, `BASE_URL`, their defaults), read as the crawl reads them.
  const config = sharedConfigOf(readEnv(v.object(SHARED_ENV), process.env));
  const result = await buildSite({
    dataDir: config.dataDir,
    baseUrl: config.baseUrl,
    progress: (line) => console.log(`[spotcheck] ${line}`),
  });
  const run = result.input.crawlRun?.runId ?? 'no published crawl yet';
  const e = result.endpoints;
  console.log(
    `[spotcheck] site built from ${run}: ${result.pages} pages and ${result.receipts} receipt pages, with ${e.endpoints} endpoint, ${e.hosts} host and ${e.tasks} task pages (${e.written} files written, ${e.kept} unchanged kept), in ${(result.ms / 1000).toFixed(1)} s`,
  );
  console.log(
    result.published
      ? `[spotcheck] ${result.dir} (published as ${join(config.dataDir, 'site')})`
      : `[spotcheck] ${result.dir} (not published: a newer build finished first)`,
  );
  // For bench/site.ts: this process's peak resident memory (site/astro-build.mjs reports its own).
  if (process.env.SITE_BUILD_REPORT) {
    const phases = Object.entries(result.phases).map(([phase, ms]) => `${phase} ${(ms / 1000).toFixed(1)} s`);
    console.log(`[spotcheck] phases: ${phases.join(', ')}`);
    console.log(`[spotcheck] peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  }
}
