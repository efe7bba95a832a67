import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { select } from '../../../io/duckdb/query.ts';
import { openDuckDbStore } from '../../../io/store/duckdb.ts';
import { createMemoryStore } from '../../../io/store/memory.ts';
import { checkRow } from '../../fixtures/check-row.ts';
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

// The live service's index: the ledger writes each receipt's file, and the index reads bodies back from there.
testStore('duckdb, bodies read from the receipt files', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spotcheck-store-'));
  dirs.push(dir);
  const files = new Map<string, Record<string, unknown>>();
  const store = await openDuckDbStore(join(dir, 'db.duckdb'), {
    bodies: { read: async (id) => files.get(id) ?? null },
  });
  return {
    ...store,
    indexReceipts(rows) {
      // A receipt's file is written once, as its first row is.
      for (const row of rows) if (!files.has(row.id)) files.set(row.id, row.body);
      store.indexReceipts(rows.map((row) => ({ ...row, bodyInFile: true })));
    },
  };
});

describe('duckdb: receipts whose body is in their file', () => {
  it('are indexed without the body and read back through the receipt bodies; other rows keep theirs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spotcheck-store-'));
    dirs.push(dir);
    const path = join(dir, 'db.duckdb');
    const asked: string[] = [];
    const store = await openDuckDbStore(path, {
      bodies: {
        read: async (id) => {
          asked.push(id);
          return { id, from: 'file' };
        },
      },
    });
    const at = '2026-11-24T09:00:00.000Z';
    store.indexReceipts([
      { ...checkRow('sc-in-file-aaaaaaaaaaaaaaaaaaa', 'https://f.example/a', 'pay', at), bodyInFile: true },
      checkRow('sc-in-index-aaaaaaaaaaaaaaaaaa', 'https://f.example/b', 'pay', at),
    ]);
    expect(await store.receipt('sc-in-file-aaaaaaaaaaaaaaaaaaa')).toEqual({
      id: 'sc-in-file-aaaaaaaaaaaaaaaaaaa',
      from: 'file',
    });
    expect(await store.receipt('sc-in-index-aaaaaaaaaaaaaaaaaa')).toMatchObject({
      id: 'sc-in-index-aaaaaaaaaaaaaaaaaa',
      type: 'check',
    });
    expect(asked).toEqual(['sc-in-file-aaaaaaaaaaaaaaaaaaa']);
    await store.close();

    const instance = await DuckDBInstance.create(path);
    const db = await instance.connect();
    const rows = await select(db, 'SELECT id, length(body) AS n FROM receipts ORDER BY id', []);
    expect(rows.map((row) => [row.id, Number(row.n) > 0])).toEqual([
      ['sc-in-file-aaaaaaaaaaaaaaaaaaa', false],
      ['sc-in-index-aaaaaaaaaaaaaaaaaa', true],
    ]);
    db.closeSync();
    instance.closeSync();
  });
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
      expect((await store.latestReceiptByUrl(url, { url, method: 'GET' }))?.id).toBe('sc-live');
    } finally {
      await store.close();
    }
  });
});

describe('duckdb: a database made before the host column', () => {
  it('gains host columns filled from the normalized URLs, indexed, and answers by host from them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spotcheck-store-'));
    dirs.push(dir);
    const path = join(dir, 'db.duckdb');
    const raw = async <T>(use: (db: Awaited<ReturnType<DuckDBInstance['connect']>>) => Promise<T>) => {
      const instance = await DuckDBInstance.create(path);
      const db = await instance.connect();
      try {
        return await use(db);
      } finally {
        db.closeSync();
        instance.closeSync();
      }
    };
    await raw(async (db) => {
      await db.run(`CREATE TABLE receipts (
        id VARCHAR PRIMARY KEY, type VARCHAR NOT NULL, issued_at VARCHAR NOT NULL, url VARCHAR, url_norm VARCHAR,
        method VARCHAR, verdict VARCHAR, reason VARCHAR, check_type VARCHAR, mode VARCHAR, tier VARCHAR,
        body VARCHAR NOT NULL, public_state BOOLEAN);
        CREATE INDEX receipts_by_url ON receipts (url_norm);
        CREATE TABLE observations (
          url_norm VARCHAR NOT NULL, method VARCHAR NOT NULL, observed_at VARCHAR NOT NULL, http_status INTEGER,
          price_usd DOUBLE, amount_atomic VARCHAR, network VARCHAR, asset VARCHAR, pay_to VARCHAR,
          PRIMARY KEY (url_norm, method, observed_at));
        CREATE TABLE listings (
          url_norm VARCHAR NOT NULL, method VARCHAR NOT NULL, url VARCHAR NOT NULL, price_usd DOUBLE, network VARCHAR,
          asset VARCHAR, pay_to VARCHAR, source VARCHAR NOT NULL, PRIMARY KEY (url_norm, method, source));
        INSERT INTO listings VALUES ('https://a.example:8443/y', 'GET', 'https://a.example:8443/y', NULL, NULL, NULL,
          NULL, 'cdp');`);
      for (const [id, urlNorm] of [
        ['sc-1', 'https://a.example/x'],
        ['sc-2', 'https://a.example:8443/y'],
        ['ps-1', null],
      ] as const) {
        await db.run('INSERT INTO receipts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
          id,
          'check',
          '2026-11-01T00:00:00.000Z',
          urlNorm,
          urlNorm,
          'GET',
          'pay',
          'price_ok',
          'dry-run',
          'live',
          'free',
          JSON.stringify({ id }),
          false,
        ]);
      }
      await db.run(
        `INSERT INTO observations VALUES ('https://a.example/x', 'GET', '2026-11-01T00:00:00.000Z', 402, 0.01,
          '10000', 'eip155:8453', '0xa', '0xb')`,
      );
    });

    const store = await openDuckDbStore(path);
    try {
      expect(await store.checksByHost('a.example', 10)).toHaveLength(1);
      expect(await store.observationsByHost('a.example', 10)).toHaveLength(1);
      // A listing of the old file stands for its endpoint's form on the badge; an import after it adds its host too.
      expect(await store.listing('https://a.example:8443/y', 'GET')).toMatchObject({ source: 'cdp' });
      await store.importListings([
        {
          url: 'https://b.example/z',
          urlNorm: 'https://b.example/z',
          method: 'GET',
          priceUsd: null,
          network: null,
          asset: null,
          payTo: null,
          source: 'payai',
        },
      ]);
    } finally {
      await store.close();
    }
    await raw(async (db) => {
      const hosts = await select(db, 'SELECT id, host FROM receipts ORDER BY id', []);
      expect(hosts).toEqual([
        { id: 'ps-1', host: null },
        { id: 'sc-1', host: 'a.example' },
        { id: 'sc-2', host: 'a.example:8443' },
      ]);
      expect(await select(db, 'SELECT host FROM observations', [])).toEqual([{ host: 'a.example' }]);
      expect(await select(db, 'SELECT source, host FROM listings ORDER BY source', [])).toEqual([
        { source: 'cdp', host: 'a.example:8443' },
        { source: 'payai', host: 'b.example' },
      ]);
      const indexes = await select(db, 'SELECT index_name FROM duckdb_indexes() ORDER BY index_name', []);
      expect(indexes.map((i) => i.index_name)).toEqual(
        expect.arrayContaining(['listings_by_host', 'observations_by_host', 'receipts_by_host']),
      );
    });
  });
});

describe('duckdb: listings kept in memory', () => {
  it('answers after an import exactly what the table answers once reopened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spotcheck-store-'));
    dirs.push(dir);
    const path = join(dir, 'db.duckdb');
    const listing = (source: string, url: string, priceUsd: number | null) => ({
      url,
      urlNorm: url,
      method: 'GET' as const,
      priceUsd,
      network: 'eip155:8453',
      asset: null,
      payTo: `0x${source}`,
      source,
    });
    const urls = ['https://a.example/x', 'https://b.example/y', 'https://c.example/z'];
    let store = await openDuckDbStore(path);
    await store.importListings([listing('old', urls[0]!, 0.01), listing('old', urls[1]!, 0.02)]);
    await store.importListings([listing('keep', urls[1]!, 0.03)]);
    await store.importListings([listing('old', urls[2]!, Number.POSITIVE_INFINITY)]);
    const cached = await Promise.all(urls.map((url) => store.listing(url, 'GET')));
    await store.close();
    store = await openDuckDbStore(path);
    try {
      expect(await Promise.all(urls.map((url) => store.listing(url, 'GET')))).toEqual(cached);
      expect(cached.map((l) => l?.source ?? null)).toEqual([null, 'keep', 'old']);
      expect(cached[2]?.priceUsd).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('takes imports one at a time, and a check during one sees the old listings or the new ones, never a mix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spotcheck-store-'));
    dirs.push(dir);
    const store = await openDuckDbStore(join(dir, 'db.duckdb'));
    const many = (source: string, priceUsd: number) =>
      Array.from({ length: 6000 }, (_, i) => ({
        url: `https://seller-${i}.example/x`,
        urlNorm: `https://seller-${i}.example/x`,
        method: 'GET' as const,
        priceUsd,
        network: 'eip155:8453',
        asset: null,
        payTo: '0x1',
        source,
      }));
    try {
      await store.importListings(many('big', 0.01));
      const first = 'https://seller-0.example/x';
      const last = 'https://seller-5999.example/x';
      const seen: string[] = [];
      let importing = true;
      const watch = async () => {
        while (importing) {
          const [a, b] = await Promise.all([store.listing(first, 'GET'), store.listing(last, 'GET')]);
          seen.push(`${a?.priceUsd}/${b?.priceUsd}`);
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const watching = watch();
      // Two at once: the second waits for the first, then replaces the same source again.
      const counts = await Promise.all([
        store.importListings(many('big', 0.02)),
        store.importListings(many('big', 0.03)),
      ]);
      importing = false;
      await watching;
      expect(counts).toEqual([6000, 6000]);
      // The imports yielded to the event loop many times, and each look saw one whole cache.
      expect(seen.length).toBeGreaterThan(2);
      expect(seen.filter((pair) => !['0.01/0.01', '0.02/0.02', '0.03/0.03'].includes(pair))).toEqual([]);
      expect(seen).toContain('0.02/0.02');
      expect((await store.listing(last, 'GET'))?.priceUsd).toBe(0.03);
    } finally {
      await store.close();
    }
    // Three imports of 6,000 listings: seconds on a quiet machine, many more beside other work on two cores.
  }, 120_000);
});
