/**
 * vitest global setup of the e2e project: a folder for the sites prepared once per run (`prepared-sites.ts`),
 * removed when the run ends. Nothing is built here: the first test file that needs a site prepares it, so a run
 * without browser files pays nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'spotcheck-prepared-sites-'));
  project.provide('preparedSites', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
