import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDuckDbStore } from '../../../io/store/duckdb.ts';
import { checkRow } from '../../fixtures/check-row.ts';

const dir = mkdtempSync(join(tmpdir(), 'spotcheck-flush-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the DuckDB index under a steady stream of receipts', () => {
  it('finishes a flush once the rows queued before it are in, while new rows keep arriving', async () => {
    const store = await openDuckDbStore(join(dir, 'db.duckdb'));
    let n = 0;
    let producing = true;
    // A server under check load: every turn of the event loop queues more receipts.
    const produce = () => {
      if (!producing) return;
      store.indexReceipts(
        Array.from({ length: 20 }, () => {
          n++;
          const id = `sc-${n.toString(36).padStart(26, 'a')}`;
          return checkRow(id, `https://load-${n % 50}.example/x`, 'pay', new Date().toISOString());
        }),
      );
      setImmediate(produce);
    };
    produce();
    const before = n;
    const flushed = await Promise.race([
      store.flush().then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000)),
    ]);
    producing = false;
    expect(flushed).toBe(true);
    // What was queued before the flush is in the index.
    expect((await store.checksByHost('load-1.example', 10_000)).length).toBeGreaterThanOrEqual(
      Math.floor(before / 50),
    );
    await store.close();
  }, 20_000);
});

describe('the DuckDB index writes (staged through an appender)', () => {
  it('keeps the first copy of an id, skips a row the table refuses without losing the others, and keeps odd values', async () => {
    const path = join(dir, 'staged.duckdb');
    const store = await openDuckDbStore(path);
    const at = '2026-11-24T09:00:00.000Z';
    const first = checkRow('sc-staged-first-aaaaaaaaaaaaaaaa', 'https://staged.example/a', 'pay', at);
    store.indexReceipts([first]);
    await store.flush();
    const logged: unknown[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args) => void logged.push(args));
    const again = { ...first, body: { ...first.body, verdict: 'skip' } };
    // A row without its issue time breaks the table's NOT NULL: only that row stays out.
    const refused = {
      ...checkRow('sc-staged-refused-aaaaaaaaaaaaaa', 'https://staged.example/b', 'pay', at),
    };
    refused.issuedAt = null as unknown as string;
    // No status, a price no 64-bit integer holds, no terms: kept as they are.
    const odd = {
      observed_at: at,
      http_status: null,
      price_usd: 1e71,
      amount_atomic: '1'.repeat(80),
      network: null,
      asset: null,
      pay_to: null,
    };
    const good = checkRow('sc-staged-good-aaaaaaaaaaaaaaaaa', 'https://staged.example/c', 'skip', at);
    store.indexReceipts([again, refused, good]);
    store.addObservation('https://staged.example/a', 'GET', odd);
    await store.flush();
    spy.mockRestore();
    await store.close();

    const reopened = await openDuckDbStore(path);
    expect((await reopened.receipt(first.id))?.verdict).toBe('pay');
    expect(await reopened.receipt(refused.id)).toBeNull();
    expect((await reopened.receipt(good.id))?.verdict).toBe('skip');
    expect(logged.map((args) => String((args as unknown[])[0]))).toEqual([
      '[spotcheck] [store] row not indexed in receipts',
    ]);
    expect(await reopened.observations('https://staged.example/a', 'GET')).toEqual([odd]);
    await reopened.close();
  });
});
