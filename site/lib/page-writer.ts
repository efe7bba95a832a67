/**
 * Writes the endpoint, host and task pages of a build so that a rebuild rewrites only what changed
 * (docs/site.md "Rebuilding after a crawl"): the SHA-256 of every page is kept in the build folder
 * (`.page-hashes.json`); a page whose bytes hash as in the build served now is hard-linked from it, no byte written.
 *
 * Any other page goes into a file this build owns. With `recycled` (the folders of the build before the one served,
 * which this build replaces; `site/build.ts` `removeUnkept`), its folders are moved in and its files reused: on this
 * machine's disk, creating a file or a folder costs 10 to 20 times writing over one (BENCHMARKS.md, `site-history`),
 * and after a crawl every endpoint page changes. A file is written over only when it has one link, checked on the
 * open file: a file shared with the build served (or with a run folder) is replaced by a new one, never written
 * through. What the recycled folders held and this build did not write is removed by `finish`. A build's folder is
 * never changed once published, so the build being served is untouched.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import * as v from 'valibot';

/** The file of a build folder holding the hash of each page the pass wrote, by path. */
export const PAGE_HASHES = '.page-hashes.json';

/** What a pass did: pages written, and pages kept from the previous build (linked, not written). */
export type PageFiles = { written: number; kept: number };

/** Puts the pages of one build into its folder. */
export type PageWriter = {
  /** Puts the page at `path` (relative to the build folder, `/`-separated). */
  put(path: string, text: string): void;
  /** Writes the hashes, removes what the recycled folders held and no page took; returns the counts. */
  finish(): PageFiles;
};

const Hashes = v.object({ schema: v.literal(1), pages: v.record(v.string(), v.string()) });

/**
 * A writer into the build folder `out`; `previous` is the folder of the build served now, or null for a full
 * build. A previous build without hashes (or with unreadable ones) is as none: every page is written. `recycled` is
 * a folder holding top-level folders of an unkept build (`endpoints/`, `hosts/`, `tasks/`), moved into `out` as the
 * first page under each is put.
 */
export function createPageWriter(
  out: string,
  previous: string | null,
  recycled: string | null = null,
): PageWriter {
  const before = previous === null ? {} : readHashes(previous);
  const hashes: Record<string, string> = {};
  const dirs = new Set<string>();
  const files: PageFiles = { written: 0, kept: 0 };
  /** Top-level folders looked at (moved in or not), and the entries of those moved in that no page has taken yet. */
  const tops = new Set<string>();
  const leftFiles = new Set<string>();
  const leftDirs = new Set<string>();
  const recycle = (path: string) => {
    const top = path.split('/')[0] as string;
    if (recycled === null || tops.has(top) || !path.includes('/')) return;
    tops.add(top);
    const from = join(recycled, top);
    if (!existsSync(from) || existsSync(join(out, top))) return;
    mkdirSync(out, { recursive: true });
    renameSync(from, join(out, top));
    dirs.add(join(out, top));
    for (const entry of readdirSync(join(out, top), { recursive: true, withFileTypes: true })) {
      const full = join(entry.parentPath, entry.name);
      if (entry.isDirectory()) leftDirs.add(full);
      else leftFiles.add(full);
    }
  };
  return {
    put(path, text) {
      recycle(path);
      const bytes = Buffer.from(text, 'utf8');
      const hash = createHash('sha256').update(bytes).digest('base64url');
      hashes[path] = hash;
      const to = join(out, path);
      const dir = dirname(to);
      if (!dirs.has(dir)) {
        if (leftDirs.has(dir)) leftDirs.delete(dir);
        else mkdirSync(dir, { recursive: true });
        dirs.add(dir);
        for (let up = dirname(dir); leftDirs.delete(up); up = dirname(up)) dirs.add(up);
      }
      const reused = leftFiles.delete(to);
      if (previous !== null && before[path] === hash) {
        if (reused) rmSync(to, { recursive: true, force: true });
        if (linked(join(previous, path), to, bytes.length)) {
          files.kept++;
          return;
        }
      }
      writeOwnFile(to, bytes, reused);
      files.written++;
    },
    finish() {
      writeFileSync(join(out, PAGE_HASHES), `${JSON.stringify({ schema: 1, pages: hashes })}\n`);
      for (const file of leftFiles) rmSync(file, { recursive: true, force: true });
      // Deepest first, so a folder is empty by the time its turn comes; one still holding a page is not removed.
      for (const dir of [...leftDirs].sort((a, b) => b.length - a.length))
        if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
      leftFiles.clear();
      leftDirs.clear();
      return { ...files };
    },
  };
}

/**
 * Writes `bytes` as the file `to` of a build being written. With `reuse` (a file from a recycled build may be
 * there), the file there is written over when it is a regular file with one link, which the open file itself is
 * asked (so nothing shared is ever written through); anything else there is removed and a new file created.
 */
export function writeOwnFile(to: string, bytes: Uint8Array, reuse: boolean): void {
  if (reuse) {
    let fd: number | null = null;
    try {
      fd = openSync(to, 'r+');
      const stat = fstatSync(fd);
      if (stat.isFile() && stat.nlink === 1) {
        for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at, at);
        if (stat.size > bytes.length) ftruncateSync(fd, bytes.length);
        return;
      }
    } catch {
      // Not there, or not a file: created below.
    } finally {
      if (fd !== null) closeSync(fd);
    }
    rmSync(to, { recursive: true, force: true });
  }
  // `wx`: never opens a file that is there, so never one linked from another build; a path put twice is written
  // over as above.
  try {
    writeFileSync(to, bytes, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || reuse) throw error;
    writeOwnFile(to, bytes, true);
  }
}

function readHashes(folder: string): Record<string, string> {
  try {
    const parsed = v.safeParse(Hashes, JSON.parse(readFileSync(join(folder, PAGE_HASHES), 'utf8')));
    return parsed.success ? parsed.output.pages : {};
  } catch {
    return {};
  }
}

/**
 * Links `from` (the previous build's copy) as `to`; false when it is gone (pruned by another build) or not the
 * expected size, so the caller writes the page instead. Across file systems, a copy.
 */
function linked(from: string, to: string, size: number): boolean {
  try {
    if (statSync(from).size !== size) return false;
    try {
      linkSync(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      copyFileSync(from, to);
    }
    return true;
  } catch {
    return false;
  }
}
