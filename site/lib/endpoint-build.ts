/**
 * The endpoint, host and task pages of a build in a process of their own (docs/site.md "Endpoint, host and task
 * pages"): `site/build.ts` starts this file while it writes the receipt pages, so the two use both cores, and the
 * history of the window (every check of 90 days, the build's largest holding) is given back when this process exits,
 * before Pagefind indexes the records, so the two never add up in memory.
 *
 * The job comes in `SPOTCHECK_ENDPOINT_JOB` (JSON); progress and the counts go back over the IPC channel, the search
 * records into `recordsFile` (one JSON record a line, in order).
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { parseShell } from '../../core/page-shell.ts';
import { readSiteHistory } from './endpoint-history.ts';
import { type SearchRecord, writeEndpointPages } from './endpoint-pages.ts';
import type { PageFiles } from './page-writer.ts';
import type { SiteInput } from './published.ts';

const JOB_ENV = 'SPOTCHECK_ENDPOINT_JOB';

/** What the process is asked to do. */
export type EndpointJob = {
  input: SiteInput;
  /** The build's folder the pages go into. */
  out: string;
  /** The HTML of the receipt page's shell (its slots are filled per page). */
  shellFile: string;
  /** The folder of the build served now, whose unchanged pages are linked, or null. */
  previous: string | null;
  /** The folder holding an unkept build's `endpoints/`, `hosts/` and `tasks/`, whose files are reused, or null. */
  recycled?: string | null;
  /** Where the search records go. */
  recordsFile: string;
};

/** What it wrote, and the milliseconds of its two phases. */
export type EndpointJobResult = {
  endpoints: number;
  hosts: number;
  tasks: number;
  files: PageFiles;
  phases: { history: number; 'endpoint pages': number };
};

type Message = { progress: string } | { done: EndpointJobResult };

/**
 * Starts the process; `progress` gets its phase lines. The promise settles when it has exited; `stop()` ends it
 * early (the build failed elsewhere).
 */
export function startEndpointJob(
  job: EndpointJob,
  progress: (line: string) => void,
): { result: Promise<EndpointJobResult>; stop(): void } {
  const child = spawn(process.execPath, [import.meta.filename], {
    env: { ...process.env, [JOB_ENV]: JSON.stringify(job) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let done: EndpointJobResult | null = null;
  child.on('message', (message: Message) => {
    if ('progress' in message) progress(message.progress);
    else done = message.done;
  });
  const result = new Promise<EndpointJobResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && done !== null) resolve(done);
      else reject(new Error(`the endpoint pages failed (exit ${code})`));
    });
  });
  return { result, stop: () => child.kill() };
}

/** Reads the history, writes the pages and the records: the body of the process. */
async function runJob(job: EndpointJob, send: (message: Message) => void): Promise<void> {
  const timed = async <T>(phase: string, run: () => Promise<T> | T): Promise<[T, number]> => {
    const t = performance.now();
    send({ progress: `${phase}…` });
    const value = await run();
    const ms = Math.round(performance.now() - t);
    send({ progress: `${phase}: done in ${(ms / 1000).toFixed(1)} s` });
    return [value, ms];
  };
  const [history, historyMs] = await timed('history', () => readSiteHistory(job.input));
  const parts = parseShell(await readFile(job.shellFile, 'utf8'));
  const [written, pagesMs] = await timed('endpoint pages', () =>
    writeEndpointPages(history, job.out, parts, job.input.baseUrl, job.previous, job.recycled ?? null),
  );
  await writeFile(job.recordsFile, written.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  send({
    done: {
      endpoints: written.endpoints,
      hosts: written.hosts,
      tasks: written.tasks,
      files: written.files,
      phases: { history: historyMs, 'endpoint pages': pagesMs },
    },
  });
}

/** The search records `runJob` wrote, in order. */
export async function readRecords(file: string): Promise<SearchRecord[]> {
  const text = await readFile(file, 'utf8');
  return text === ''
    ? []
    : text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as SearchRecord);
}

if (import.meta.main) {
  const text = process.env[JOB_ENV];
  if (!text || process.send === undefined)
    throw new Error(`${JOB_ENV} is not set: site/build.ts starts this`);
  let last: Promise<void> = Promise.resolve();
  const send = (message: Message) => {
    last = new Promise((sent) => process.send?.(message, undefined, {}, () => sent()));
  };
  await runJob(JSON.parse(text) as EndpointJob, send);
  // The last message (the counts) is out before the channel closes and the process ends.
  await last;
  process.disconnect?.();
}
