/**
 * Files that must survive SIGKILL and power loss whole or not at all: written to a sibling temp file, fsynced,
 * renamed into place, and the folder fsynced so the rename itself is durable.
 */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `text` to `path` atomically and durably. A reader sees the old file or the new one, never a part. `text` may
 * come in chunks, written one after the other, so a large file is never built as one string.
 * @example await writeFileDurably(join(dir, 'current.json'), JSON.stringify(pointer))
 */
export async function writeFileDurably(
  path: string,
  text: string | Iterable<string>,
  options: { sync?: boolean } = {},
): Promise<void> {
  const dir = dirname(path);
  const sync = options.sync ?? true;
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  try {
    const handle = await open(tmp, 'w');
    try {
      // Written at the handle's position: one chunk after the other.
      for (const chunk of typeof text === 'string' ? [text] : text) await handle.writeFile(chunk, 'utf8');
      if (sync) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  if (sync) await syncDir(dir);
}

/** fsyncs a folder, making the renames and creations inside it durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
