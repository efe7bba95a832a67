/**
 * The opt-out list as files (`core/opt-out.ts`, docs/decisions.md "Politeness"): the checked-in `data/opt-out.json`
 * and the operator's `DATA_DIR/opt-out.json`, which takes a seller's request without a release. A missing file is an
 * empty list; a bad one is the operator's to fix. The crawl reads the files once per run and stops on a bad one
 * (`readOptOutFiles`); the service reads them while it runs (`createOptOutSource`): the watches must stop probing a
 * host from the moment the operator lists it, without a restart.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { mergeOptOut, type OptOutList, parseOptOut } from '../core/opt-out.ts';

/** The two files of a data folder: the checked-in list, then the operator's. */
export function optOutPaths(dataDir: string): string[] {
  return [join(import.meta.dirname, '../data/opt-out.json'), join(dataDir, 'opt-out.json')];
}

/**
 * Reads and merges the lists at `paths`; a bad file is a `TypeError` naming it.
 * @example const optOut = await readOptOutFiles(['data/opt-out.json', join(dataDir, 'opt-out.json')])
 */
export async function readOptOutFiles(paths: readonly string[]): Promise<OptOutList> {
  const lists: OptOutList[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') continue;
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new TypeError(`${path}: not JSON`);
    }
    const parsed = parseOptOut(value);
    if (!parsed.ok) throw new TypeError(`${path}: ${parsed.message}`);
    lists.push(parsed.list);
  }
  return mergeOptOut(...lists);
}

/**
 * The list as it stands: `list` is the last one read whole, `error` says why the files as they are now could not
 * be (null when they were read), so a caller that must not probe on a doubtful list can refuse to.
 */
export type OptOutReading = { list: OptOutList; error: string | null };

/** The opt-out files of a running service, read again when one of them changed. */
export type OptOutSource = { read(): Promise<OptOutReading> };

/**
 * A source over `paths` that looks at the files' sizes and times at most once per `recheckMs` (default 1 s) and
 * reads them again only when one changed.
 */
export function createOptOutSource(paths: readonly string[], recheckMs = 1000): OptOutSource {
  let reading: OptOutReading = { list: new Set(), error: null };
  let seen: string | null = null;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<OptOutReading> | null = null;
  const refresh = async (): Promise<OptOutReading> => {
    const stamp = (await Promise.all(paths.map(stampOf))).join('|');
    if (stamp === seen) return reading;
    try {
      reading = { list: await readOptOutFiles(paths), error: null };
    } catch (error) {
      reading = { list: reading.list, error: error instanceof Error ? error.message : String(error) };
    }
    seen = stamp;
    return reading;
  };
  return {
    read() {
      if (pending) return pending;
      if (performance.now() - checkedAt < recheckMs) return Promise.resolve(reading);
      checkedAt = performance.now();
      pending = refresh().finally(() => {
        pending = null;
      });
      return pending;
    },
  };
}

/** A file's size and modification time, or `none` when it is missing. */
async function stampOf(path: string): Promise<string> {
  try {
    const s = await stat(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return 'none';
  }
}
