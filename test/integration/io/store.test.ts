import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
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

describe('duckdb: a database made before public_state', () => {
  it('gains the column, filled by the public-state rule, and by-url answers from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spotcheck-store-'));
    dirs.push(dir);
    const path = join(dir, 'db.duckdb');
    const instance = await DuckDBInstance.create(path);
    const db = await instance.connect();
    await db.run(`CREATE TABLE receipts (
      id VARCHAR PRIMARY KEY, type VARCHAR NOT NULL, issued_at VARCHAR NOT NULL, url VARCHAR, url_norm VARCHAR,
      method VARCHAR, verdict VARCHAR, reason VARCHAR, check_type VARCHAR, mode VARCHAR, tier VARCHAR,
      body VARCHAR NOT NULL);
      CREATE INDEX receipts_by_url ON receipts (url_norm);`);
    const url = 'https://a.example/x';
    const body = (id: string, at: string, extra: object) =>
      JSON.stringify({
        id,
        type: 'check',
        issued_at: at,
        mode: 'live',
        expected_source: null,
        claimed_price_usd: null,
        http_status: 402,
        ...extra,
      });
    for (const [id, at, mode, extra] of [
      ['sc-live', '2026-11-01T00:00:00.000Z', 'live', {}],
      ['sc-dry', '2026-11-02T00:00:00.000Z', 'dry-run', { mode: 'dry-run', expected_source: 'request' }],
    ] as const) {
      await db.run('INSERT INTO receipts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        id,
        'check',
        at,
        url,
        url,
        'GET',
        'pay',
        'price_ok',
        'dry-run',
        mode,
        'free',
        body(id, at, extra),
      ]);
    }
    db.closeSync();
    instance.closeSync();

    const store = await openDuckDbStore(path);
    try {
      expect((await store.latestReceiptByUrl(url))?.id).toBe('sc-live');
    } finally {
      await store.close();
    }
  });
});
