/**
 * Where crawl and bazaar runs live under `DATA_DIR` (docs/data-files.md): unfinished runs in `<kind>/work/<id>/`,
 * published runs in `<kind>/runs/<id>/`, and `<kind>/current.json` naming the published run readers use. The
 * crawl writes; the API and the site build only read, so none of them needs the server's database.
 */

import { mkdir, readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import * as v from 'valibot';
import { syncDir, writeFileDurably } from '../durable-file.ts';

export type RunKind = 'crawl' | 'bazaar' | 'known-answers';

/** The folders and files of one kind of run. */
export type RunPaths = { root: string; runs: string; work: string; current: string };

/** `YYYYMMDDTHHMMSSZ-xxxx`: sorts by start time. */
const RUN_ID = /^\d{8}T\d{6}Z-[0-9a-f]{4}$/;

/** The paths of `kind` under `dataDir`. */
export function runPaths(dataDir: string, kind: RunKind): RunPaths {
  const root = join(dataDir, kind);
  return { root, runs: join(root, 'runs'), work: join(root, 'work'), current: join(root, 'current.json') };
}

/**
 * A new run id from the start time and two random bytes.
 * @example newRunId(new Date('2026-11-24T01:02:03Z'), () => new Uint8Array([0x3f, 0x9a])) // '20261124T010203Z-3f9a'
 */
export function newRunId(now: Date, random: (n: number) => Uint8Array): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
  const hex = [...random(2)].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${stamp}-${hex}`;
}

/** True for a run id (safe as a folder name). */
export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && RUN_ID.test(value);
}

/** Run ids in a folder, oldest first; none when the folder does not exist. */
export async function listRuns(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter(isRunId).sort();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return [];
    throw error;
  }
}

const Pointer = v.object({
  schema: v.literal(1),
  run_id: v.pipe(v.string(), v.regex(RUN_ID)),
  path: v.string(),
  published_at: v.string(),
});

/** `current.json`: the published run. */
export type RunPointer = v.InferOutput<typeof Pointer>;

/** Reads `current.json`; null before the first run (or when the file is not a pointer). */
export async function readPointer(paths: RunPaths): Promise<RunPointer | null> {
  let text: string;
  try {
    text = await readFile(paths.current, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const parsed = v.safeParse(Pointer, JSON.parse(text));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}

/** The folder of a published run. */
export function publishedRunDir(paths: RunPaths, runId: string): string {
  if (!isRunId(runId)) throw new TypeError(`not a run id: ${JSON.stringify(runId)}`);
  return join(paths.runs, runId);
}

/**
 * Publishes a finished run: renames `work/<id>` to `runs/<id>` (skipped when a crash left it already renamed),
 * then replaces `current.json`. That last rename is the moment of publication.
 */
export async function publishRun(paths: RunPaths, runId: string, now: Date): Promise<RunPointer> {
  const target = publishedRunDir(paths, runId);
  await mkdir(paths.runs, { recursive: true });
  if (!(await listRuns(paths.runs)).includes(runId)) {
    await rename(join(paths.work, runId), target);
    await syncDir(paths.runs);
    await syncDir(paths.work);
  }
  const pointer: RunPointer = {
    schema: 1,
    run_id: runId,
    path: `runs/${runId}`,
    published_at: now.toISOString(),
  };
  await writeFileDurably(paths.current, `${JSON.stringify(pointer, null, 2)}\n`);
  return pointer;
}

/** Reads a JSON file of a published run; null when absent or not JSON (an earlier run is a help, never required). */
export function readRunJson(paths: RunPaths, runId: string, name: string): Promise<unknown> {
  return readJsonValue(join(publishedRunDir(paths, runId), name));
}

/** Reads the lines of a published run's `receipts.ndjson`; empty when absent. Bad lines are skipped. */
export function readRunIndex(paths: RunPaths, runId: string): Promise<unknown[]> {
  return readNdjson(join(publishedRunDir(paths, runId), 'receipts.ndjson'));
}

/** A JSON file's value; null when it is absent or not JSON. */
export async function readJsonValue(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return null;
  }
}

/** A JSON file's object; null when it is absent, not JSON, or not an object. */
export async function readJsonRecord(path: string): Promise<Record<string, unknown> | null> {
  const value = await readJsonValue(path);
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** Lines parsed between two turns of the event loop, so a large run never holds it. */
const NDJSON_LINES_PER_TURN = 1000;

/** The parsed lines of an NDJSON file, in file order; empty when absent. A damaged line costs that line only. */
export async function readNdjson(path: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  const out: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (i % NDJSON_LINES_PER_TURN === 0 && i > 0) await yieldToEventLoop();
    const line = lines[i] as string;
    if (line.length === 0) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // Skipped.
    }
  }
  return out;
}

/** A file of the published run: its text, or why there is none. */
export type PublishedFile = { kind: 'file'; text: string } | { kind: 'no_run' } | { kind: 'no_file' };

/**
 * Reads `name` (a path inside the run folder, such as `skips/2.json`) of the run `current.json` names. `name`
 * must come from the caller's own code, never from a request.
 */
export async function readPublishedFile(paths: RunPaths, name: string): Promise<PublishedFile> {
  const pointer = await readPointer(paths);
  if (pointer === null) return { kind: 'no_run' };
  try {
    return { kind: 'file', text: await readFile(join(publishedRunDir(paths, pointer.run_id), name), 'utf8') };
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return { kind: 'no_file' };
    throw error;
  }
}
