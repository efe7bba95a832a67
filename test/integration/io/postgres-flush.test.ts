/**
 * The PostgreSQL index under a steady stream of receipts: an acknowledged answer waits for its receipt's commit
 * (`committed`), so a flush that waited for the queue to run empty would hold every answer while load lasts.
 */
import { describe, expect, it } from 'vitest';
import { connectPostgres, postgresStore } from '../../../io/store/postgres.ts';
import { checkRow } from '../../fixtures/check-row.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

describe.skipIf(postgresMissing !== null)('the PostgreSQL index under a steady stream of receipts', () => {
  const pg = usePostgres();

  it('commits a receipt queued before the stream grew, and flushes, while new rows keep arriving', async () => {
    const store = postgresStore(await connectPostgres(await pg.createDatabase()), { endPool: true });
    let n = 0;
    let producing = true;
    const rows = (count: number) =>
      Array.from({ length: count }, () => {
        n++;
        const id = `sc-${n.toString(36).padStart(26, 'a')}`;
        return checkRow(id, `https://load-${n % 50}.example/x`, 'pay', new Date().toISOString());
      });
    // A server under load: every turn of the event loop queues more receipts.
    const produce = () => {
      if (!producing) return;
      store.indexReceipts(rows(20));
      setImmediate(produce);
    };
    const first = rows(1)[0]!;
    store.indexReceipts([first]);
    produce();
    const within = <T>(work: Promise<T>) =>
      Promise.race([
        work.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000)),
      ]);
    const committed = await within(store.committed(first.id));
    const flushed = await within(store.flush());
    producing = false;
    expect(committed).toBe(true);
    expect(flushed).toBe(true);
    expect(await store.receipt(first.id)).toEqual(first.body);
    await store.flush();
    await store.close();
  }, 30_000);
});
