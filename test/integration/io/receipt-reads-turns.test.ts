/**
 * The DuckDB store's receipt reads (by id, by URL, the list) while a crawl run's chunk holds the writer's turn
 * (io/store/_duckdb-writer.ts `exclusive`): they answer at once, with the rows queued before them, instead of
 * flushing the live queue and waiting for the chunk to commit (a `GET /v1/receipts` waited up to 3.4 s for the chunk
 * under way during a 50,000-receipt ingest, bench/crawl-ingest.ts).
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { applySchema } from '../../../io/duckdb/schema.ts';
import { createIndexWrites } from '../../../io/store/_duckdb-index-writes.ts';
import { createIndexReads } from '../../../io/store/_duckdb-reads.ts';
import { createIndexWriter } from '../../../io/store/_duckdb-writer.ts';
import type { ReceiptRow } from '../../../io/store/port.ts';
import { checkRow } from '../../fixtures/check-row.ts';
import { waitFor } from '../../helpers/wait.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function openIndex() {
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  await applySchema(db);
  const readDb = await instance.connect();
  const writer = createIndexWriter(await createIndexWrites(db));
  const reads = createIndexReads(db, readDb, writer, null);
  closers.push(async () => {
    await writer.flush();
    readDb.closeSync();
    db.closeSync();
    instance.closeSync();
  });
  return { writer, reads };
}

/** Holds the writer's turn as a run chunk does, until `release` is called. */
function holdTurn(writer: { exclusive<T>(work: () => Promise<T>): Promise<T> }) {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let done = false;
  const chunk = writer
    .exclusive(() => gate)
    .then(() => {
      done = true;
    });
  return { release, chunk, done: () => done };
}

const at = (second: number) => new Date(Date.UTC(2026, 10, 27, 0, 0, second)).toISOString();
const id = (n: number) => `sc-${String(n).padStart(26, '0')}`;

describe('the receipt reads while a run chunk holds the writer turn', () => {
  it('answer by id, by URL and as a list without waiting for the chunk, with the rows queued before them', async () => {
    const { writer, reads } = await openIndex();
    writer.receipts([checkRow(id(1), 'https://a.example/x', 'pay', at(1))]);
    await writer.flush();
    const turn = holdTurn(writer);
    // Queued behind the chunk: no pass can commit them before it is released.
    writer.receipts([
      checkRow(id(2), 'https://a.example/x', 'pay', at(2)),
      checkRow(id(3), 'https://b.example/y', 'skip', at(3)),
    ]);
    let answered = false;
    const answers = Promise.all([
      reads.listReceipts({ page: 1, pageSize: 10 }),
      reads.receipt(id(3)),
      reads.receipt(id(1)),
      reads.latestReceiptByUrl('https://a.example/x', { url: 'https://a.example/x', method: 'GET' }),
    ]).finally(() => {
      answered = true;
    });
    try {
      await waitFor(() => answered, { what: 'the reads to answer while the chunk holds the turn' });
      expect(turn.done()).toBe(false);
      const [list, third, first, latest] = await answers;
      expect(list.total).toBe(3);
      expect(list.items.map((item) => item.id)).toEqual([id(3), id(2), id(1)]);
      expect(third?.['id']).toBe(id(3));
      expect(first?.['id']).toBe(id(1));
      expect(latest?.['id']).toBe(id(2));
    } finally {
      turn.release();
      await turn.chunk;
    }
    // Once the pass behind the chunk has committed them, the same answers come from the table alone.
    await writer.flush();
    expect(writer.pendingReceipts()).toEqual([]);
    const list = await reads.listReceipts({ page: 1, pageSize: 10 });
    expect(list.items.map((item) => item.id)).toEqual([id(3), id(2), id(1)]);
  });

  it('pages the table and the pending rows together as one list newest first, each receipt once', async () => {
    const { writer, reads } = await openIndex();
    // Committed and pending rows interleave in time (a run's receipts are older than the live ones, and ties on
    // `issued_at` order by id); some rows are dry-run, to page one mode.
    const row = (n: number, second: number): ReceiptRow => {
      const r = checkRow(id(n), `https://h${n % 7}.example/p`, 'pay', at(second));
      return n % 3 === 0 ? { ...r, mode: 'dry-run' } : r;
    };
    const committed = Array.from({ length: 40 }, (_, i) => row(i, (i * 7) % 53));
    const pending = Array.from({ length: 25 }, (_, i) => row(100 + i, (i * 11) % 53));
    writer.receipts(committed);
    await writer.flush();
    const turn = holdTurn(writer);
    writer.receipts(pending);
    try {
      for (const mode of [undefined, 'live', 'dry-run'] as const) {
        const all = [...committed, ...pending]
          .filter((r) => !mode || r.mode === mode)
          .sort((a, b) =>
            a.issuedAt === b.issuedAt ? b.id.localeCompare(a.id) : b.issuedAt.localeCompare(a.issuedAt),
          )
          .map((r) => r.id);
        for (const pageSize of [3, 7, 100]) {
          const seen: string[] = [];
          for (let page = 1; page <= Math.ceil(all.length / pageSize) + 1; page++) {
            const answer = await reads.listReceipts({ ...(mode ? { mode } : {}), page, pageSize });
            expect(answer.total, `${mode} ${pageSize}`).toBe(all.length);
            seen.push(...answer.items.map((item) => item.id));
          }
          expect(seen, `${mode} ${pageSize}`).toEqual(all);
        }
      }
      expect(turn.done()).toBe(false);
    } finally {
      turn.release();
      await turn.chunk;
    }
  });

  it('counts a pending row once while its pass commits it', async () => {
    const { writer, reads } = await openIndex();
    writer.receipts(
      Array.from({ length: 500 }, (_, i) => checkRow(id(i), 'https://a.example/x', 'pay', at(i % 60))),
    );
    // The pass takes the rows and inserts them while the reads run: each read counts every row once, from the
    // table or from the rows still pending, whichever side it finds it on.
    const flushed = writer.flush();
    const totals = await Promise.all(
      Array.from({ length: 20 }, () =>
        reads.listReceipts({ page: 1, pageSize: 5 }).then((page) => page.total),
      ),
    );
    await flushed;
    expect(new Set(totals)).toEqual(new Set([500]));
  });
});
