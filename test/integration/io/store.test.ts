import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openDuckDbStore } from '../../../io/duckdb-store.ts';
import { createMemoryStore } from '../../../io/memory-store.ts';
import { testStore } from './store-contract.ts';

// Each contract case opens a fresh database directory; all of them go once the file is done.
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

testStore('memory', async () => createMemoryStore());
testStore('duckdb', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spotcheck-store-'));
  dirs.push(dir);
  return openDuckDbStore(join(dir, 'db.duckdb'));
});
