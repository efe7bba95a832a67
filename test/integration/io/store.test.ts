import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuckDbStore } from '../../../io/duckdb-store.ts';
import { createMemoryStore } from '../../../io/memory-store.ts';
import { testStore } from './store-contract.ts';

testStore('memory', async () => createMemoryStore());
testStore('duckdb', async () =>
  openDuckDbStore(join(mkdtempSync(join(tmpdir(), 'spotcheck-store-')), 'db.duckdb')),
);
