/**
 * `npm run build:site`: builds the public site from the published crawl and bazaar runs and publishes it as
 * `DATA_DIR/site`. Safe beside the server, a crawl and another build (docs/site.md "Builds side by side"):
 *
 * - each build has its own scratch folder `site-builds/.<name>.work/` (Astro's root, `.astro/`, caches) and writes
 *   into its own staging folder `site-builds/.<name>.staging/`; nothing is written into the repository;
 * - the staging folder is renamed to `site-builds/<name>/` only when complete, then `DATA_DIR/site`, a symlink, is
 *   replaced by a rename, so the server (which resolves the link per request) switches at once, without a restart,
 *   and never sees half a build; a build never replaces a newer one that finished first;
 * - the two newest builds are kept; older ones and the scratch folders of dead builds are removed, but for the
 *   page folders of the newest of them, whose files this build reuses (`site/lib/page-writer.ts`).
 *
 * It reads only published run folders and key files, never the database.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
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
import { PAGE_SHELL_FILE } from '../core/page-shell.ts';
import { rulesDocument } from '../core/rules.ts';
import { headersFile } from '../core/site-cache.ts';
import { readEnv, SHARED_ENV, sharedConfigOf } from '../io/environment.ts';
import { isProcessAlive } from '../io/process-alive.ts';
import { type EndpointJobResult, readRecords, startEndpointJob } from './lib/endpoint-build.ts';
import { publishedRun, SITE_INPUT_ENV, type SiteInput } from './lib/published.ts';
import { SHELL_ID, writeReceiptPages } from './lib/receipt-pages.ts';
import { writeSearchIndex } from './lib/search-index.ts';

const ROOT = resolve(import.meta.dirname, '..');
const KEPT_BUILDS = 2;
/** What the site's sources import from outside `site/`, linked into each build's scratch folder. */
const SHARED = ['core', 'io', 'verify', 'node_modules'];
/** A finished build's folder name: the build's start, to the millisecond, and its process id. */
const BUILD_NAME = /^\d{8}T\d{9}Z-\d+$/;
/** The folders of an unkept build whose files the next build reuses rather than creates. */
const RECYCLED = ['endpoints', 'hosts', 'tasks', 'receipts'];

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
  /**
   * Milliseconds per phase (astro, receipt pages, json twins), for bench/site.ts; `history` and `endpoint pages` are
   * those of their own process, which runs beside the receipt pages (`endpoint pages, the rest` is what was left).
   */
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
  // The builds that will not be kept once this one is published are removed beside it, not after it, but for the
  // page folders of the newest of them, which this build reuses.
  const recycled = join(builds, `.${name}.recycled`);
  const removal = (await removeUnkept(builds, recycled)).done;
  try {
    // Astro first, alone: its process has exited (and given back its memory) before the pages below start.
    pages = await timed('astro', () => astroBuild(input, stage, work));
    const written = await writePages(input, { stage, work, previous, recycled }, timed, (line) =>
      options.progress?.(line),
    );
    receipts = written.receipts;
    Object.assign(phases, written.phases);
    // Pagefind indexes once the process that held the history has exited.
    const searchRecords = await timed('search index', async () =>
      writeSearchIndex(await readRecords(written.recordsFile), stage, previous),
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
    await removal;
    await rm(work, { recursive: true, force: true });
    await rm(stage, { recursive: true, force: true });
    await rm(recycled, { recursive: true, force: true });
  }
  const published = await publish(dataDir, name);
  await timed('prune', async () => {
    await removal;
    await prune(builds);
  });
  return { dir: out, pages, receipts, endpoints, published, ms: performance.now() - started, phases, input };
}

type Timed = <T>(phase: string, run: () => Promise<T>) => Promise<T>;

/**
 * The receipt pages, written by this process, and beside them (on the other core) the endpoint, host and task
 * pages, written by a process of its own (`site/lib/endpoint-build.ts`): each run of the window is read once and
 * grouped by endpoint, and the pages are written from the groups. Returns their counts and where the search records
 * are.
 */
async function writePages(
  input: SiteInput,
  dirs: { stage: string; work: string; previous: string | null; recycled: string },
  timed: Timed,
  progress: (line: string) => void,
): Promise<EndpointJobResult & { receipts: number; recordsFile: string }> {
  const { stage, work } = dirs;
  const shell = await readFile(join(stage, 'receipts', SHELL_ID, 'index.html'), 'utf8');
  const shellFile = join(work, 'shell.html');
  await writeFile(shellFile, shell);
  const recordsFile = join(work, 'search-records.ndjson');
  const job = startEndpointJob(
    { input, out: stage, shellFile, previous: dirs.previous, recycled: dirs.recycled, recordsFile },
    progress,
  );
  job.result.catch(() => undefined);
  try {
    const receipts = await timed('receipt pages', () =>
      writeReceiptPages(
        input,
        join(work, 'receipts'),
        Promise.resolve(shell),
        join(dirs.recycled, 'receipts'),
      ),
    );
    await rm(join(stage, 'receipts'), { recursive: true, force: true });
    await rename(join(work, 'receipts'), join(stage, 'receipts'));
    // The server fills the same shell for receipts issued after this build and for a browser's error pages.
    await writeFile(join(stage, PAGE_SHELL_FILE), shell);
    const written = await timed('endpoint pages, the rest', () => job.result);
    return { ...written, receipts, recordsFile };
  } finally {
    job.stop();
  }
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
    const pid = /^\.\d{8}T\d{9}Z-(?:(\d+)\.(?:work|staging|recycled)|\d+\.removed-(\d+))$/.exec(n);
    const owner = pid?.[1] ?? pid?.[2];
    if (owner !== undefined && !isProcessAlive(Number(owner)))
      rmSync(join(builds, n), { recursive: true, force: true });
  }
}

/**
 * At the start of a build: every finished build but the newest and the one served (the two kept once this build is
 * published) is renamed out of the way at once and removed by a process of its own while the build runs: removing a
 * build takes about as long as writing one, and no longer adds to a rebuild's time. The page folders of the newest
 * of them (`RECYCLED`) are first moved into `recycled`, this build's own, for it to reuse their files. Settles when
 * that process has exited (the build waits for it before it returns); `prune` removes what a killed build left half
 * removed.
 */
async function removeUnkept(builds: string, recycled: string): Promise<{ done: Promise<void> }> {
  const served = await realpath(join(builds, '..', 'site')).catch(() => null);
  const finished = (await readdir(builds).catch(() => [] as string[]))
    .filter((n) => BUILD_NAME.test(n))
    .sort();
  const doomed: string[] = [];
  for (const n of finished.slice(0, -1)) {
    if (served !== null && basename(served) === n) continue;
    const to = join(builds, `.${n}.removed-${process.pid}`);
    if (
      await rename(join(builds, n), to).then(
        () => true,
        () => false,
      )
    )
      doomed.push(to);
  }
  const newest = doomed.at(-1);
  if (newest !== undefined) {
    await mkdir(recycled, { recursive: true });
    for (const top of RECYCLED) await rename(join(newest, top), join(recycled, top)).catch(() => undefined);
  }
  if (doomed.length === 0) return { done: Promise.resolve() };
  const script =
    "for (const d of JSON.parse(process.argv[1])) require('node:fs').rmSync(d, { recursive: true, force: true });";
  const child = spawn(process.execPath, ['-e', script, JSON.stringify(doomed)], { stdio: 'ignore' });
  const done = new Promise<void>((settle) => {
    child.on('error', () => settle());
    child.on('close', () => settle());
  });
  return { done };
}

/**
 * CPU seconds of this process and of the processes it waited for (Astro, the endpoint pages, the removal), from
 * `/proc/self/stat`, for the benches: on a shared machine they say more than wall time.
 */
function cpuLine(): string {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime, stime, cutime, cstime: fields 14 to 17 of the file, 12 to 15 after the command's name.
    const ticks = [11, 12, 13, 14].map((i) => Number(fields[i]) / 100);
    const [user = 0, sys = 0, childUser = 0, childSys = 0] = ticks;
    return `CPU ${(user + sys).toFixed(1)} s (user ${user.toFixed(1)}, system ${sys.toFixed(1)}), children ${(childUser + childSys).toFixed(1)} s (user ${childUser.toFixed(1)}, system ${childSys.toFixed(1)})`;
  } catch {
    return 'CPU not measured (no /proc on this system)';
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
    console.log(`[spotcheck] ${cpuLine()}`);
  }
}
