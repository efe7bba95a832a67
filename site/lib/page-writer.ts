/**
 * Writes the endpoint, host and task pages of a build so that a rebuild rewrites only what changed
 * (docs/site.md "Rebuilding after a crawl"): the SHA-256 of every page is kept in the build folder
 * (`.page-hashes.json`); a page whose bytes hash as in the build served now is hard-linked from it, no byte written,
 * and any other is written under a temporary name and renamed into place. A build's folder is never changed once
 * published, and a linked file is never written through, so the build being served is untouched.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
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
  /** Writes the hashes; returns the counts. */
  finish(): PageFiles;
};

const Hashes = v.object({ schema: v.literal(1), pages: v.record(v.string(), v.string()) });

/**
 * A writer into the build folder `out`; `previous` is the folder of the build served now, or null for a full
 * build. A previous build without hashes (or with unreadable ones) is as none: every page is written.
 */
export function createPageWriter(out: string, previous: string | null): PageWriter {
  const before = previous === null ? {} : readHashes(previous);
  const hashes: Record<string, string> = {};
  const dirs = new Set<string>();
  const files: PageFiles = { written: 0, kept: 0 };
  return {
    put(path, text) {
      const bytes = Buffer.from(text, 'utf8');
      const hash = createHash('sha256').update(bytes).digest('base64url');
      hashes[path] = hash;
      const to = join(out, path);
      const dir = dirname(to);
      if (!dirs.has(dir)) {
        mkdirSync(dir, { recursive: true });
        dirs.add(dir);
      }
      if (previous !== null && before[path] === hash && linked(join(previous, path), to, bytes.length)) {
        files.kept++;
        return;
      }
      const tmp = `${to}.${process.pid}.tmp`;
      writeFileSync(tmp, bytes);
      renameSync(tmp, to);
      files.written++;
    },
    finish() {
      writeFileSync(join(out, PAGE_HASHES), `${JSON.stringify({ schema: 1, pages: hashes })}\n`);
      return { ...files };
    },
  };
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
