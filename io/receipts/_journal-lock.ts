/**
 * The journal's writer lock (io/receipts/journal.ts): a `LOCK` file holding the writer's pid, plus the set of directories
 * this process has open, since the lock file alone cannot tell this process apart from itself.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isProcessAlive } from '../process-alive.ts';

// Directories open for writing in this process (the lock file alone cannot tell us apart from ourselves).
const openDirs = new Set<string>();

/** One writer per directory: a second writer appending to the same segment would interleave batches. */
export async function acquireLock(dir: string): Promise<() => Promise<void>> {
  const key = resolve(dir);
  if (openDirs.has(key)) throw new Error(`journal: ${dir} is already open in this process`);
  const path = join(dir, 'LOCK');
  try {
    await writeFile(path, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    const holder = Number((await readFile(path, 'utf8')).trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isProcessAlive(holder)) {
      throw new Error(`journal: ${dir} is locked by running process ${holder}`);
    }
    // A lock left by a killed process: take it over.
    await writeFile(path, String(process.pid));
  }
  openDirs.add(key);
  return async () => {
    openDirs.delete(key);
    await rm(path, { force: true });
  };
}
