/**
 * The opt-out list as files (`core/opt-out.ts`): the checked-in `data/opt-out.json` and the operator's
 * `DATA_DIR/opt-out.json`, which takes a seller's request without a release. A missing file is an empty list; a bad
 * one is the operator's to fix, so it stops the run (`TypeError`) rather than probing a host that asked not to be.
 */
import { readFile } from 'node:fs/promises';
import { mergeOptOut, type OptOutList, parseOptOut } from '../core/opt-out.ts';

/**
 * Reads and merges the lists at `paths`.
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
