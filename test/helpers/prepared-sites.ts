/**
 * One showcase site (`test/helpers/showcase-site.ts`: fixture history, known answers, a real sandbox crawl, built
 * with `npm run build:site`) prepared once per vitest run and shared by the browser files that read it, instead of
 * each crawling and building its own: the build is most of such a file's time. The first file to ask prepares it
 * into the run's folder (`prepared-sites.setup.ts` makes the folder and removes it when the run ends); the others
 * wait for it. Each file gets a copy of its own, so what one file writes (a service's journal, a rebuild, receipts
 * indexed by a test) never reaches another, and no file depends on which one ran first.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { type ShowcaseSite, showcaseSite } from './showcase-site.ts';
import { waitFor } from './wait.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's folder of prepared sites (`prepared-sites.setup.ts`). */
    preparedSites?: string;
  }
}

/** What a prepared showcase is, with its paths relative to its data folder. */
type Descriptor = Omit<ShowcaseSite, 'dataDir' | 'receipt'>;

/**
 * A copy of the run's showcase site under a new DATA_DIR, prepared by the first caller of the run; the caller removes
 * `dataDir`. Outside a vitest run with the setup file (the screenshots script), a showcase site of its own.
 */
export async function preparedShowcaseSite(): Promise<ShowcaseSite> {
  const cache = inject('preparedSites');
  if (cache === undefined) return showcaseSite();
  const source = join(cache, 'showcase');
  const ready = join(cache, 'showcase.json');
  const failed = join(cache, 'showcase.error');
  if (claim(join(cache, 'showcase.lock'))) {
    try {
      const built = await showcaseSite();
      const descriptor: Descriptor = {
        runDir: relative(built.dataDir, built.runDir),
        kid: built.kid,
        index: built.index,
        runs: built.runs.map((run) => ({ ...run, runDir: relative(built.dataDir, run.runDir) })),
        changedKey: built.changedKey,
      };
      await rename(built.dataDir, source);
      await writeFile(ready, JSON.stringify(descriptor));
    } catch (error) {
      await writeFile(failed, String((error as Error).stack ?? error));
      throw error;
    }
  } else {
    // Another file of this run prepares it; its hook gives it as long as ours gives us.
    await waitFor(() => existsSync(ready) || existsSync(failed), {
      what: 'the showcase site another test file prepares',
      timeoutMs: 280_000,
      intervalMs: 200,
    });
    if (existsSync(failed))
      throw new Error(`preparing the showcase site failed: ${await readFile(failed, 'utf8')}`);
  }
  const descriptor = JSON.parse(await readFile(ready, 'utf8')) as Descriptor;
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-showcase-'));
  // `cp -a` keeps the relative `site` symlink pointing inside the copy, and the build's hard links.
  await promisify(execFile)('cp', ['-a', `${source}/.`, dataDir]);
  const runDir = join(dataDir, descriptor.runDir);
  return {
    ...descriptor,
    dataDir,
    runDir,
    runs: descriptor.runs.map((run) => ({ ...run, runDir: join(dataDir, run.runDir) })),
    receipt: async (id: string) =>
      JSON.parse(await readFile(join(runDir, 'receipts', `${id}.json`), 'utf8')) as Record<string, unknown>,
  };
}

/** Whether this process took `lock` (an atomic mkdir): the one that prepares what it guards. */
function claim(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}
