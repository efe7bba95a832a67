import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDbStore } from '../../../io/duckdb-store.ts';
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
