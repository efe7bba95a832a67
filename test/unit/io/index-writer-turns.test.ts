/**
 * The DuckDB store's writer and a crawl run's import take turns (io/store/_duckdb-writer.ts `exclusive`): a pass of
 * the live queue never overlaps a run chunk written on the other connection, where DuckDB would refuse one of the
 * two inserts and the refused pass would go in row by row.
 */
import { describe, expect, it } from 'vitest';
import { createIndexWriter } from '../../../io/store/_duckdb-writer.ts';
import type { ReceiptRow } from '../../../io/store/port.ts';

const row = (id: string) => ({ id }) as unknown as ReceiptRow;

describe('the index writer and a run import', () => {
  it('runs a pass only after the run chunk under way is done, and a chunk only after the pass under way', async () => {
    const log: string[] = [];
    const writer = createIndexWriter({
      receipts: async (rows) => {
        log.push(`pass ${rows.map((r) => r.id).join(',')}`);
      },
      observations: async () => {},
    });
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const chunk = writer.exclusive(async () => {
      log.push('chunk start');
      await gate;
      log.push('chunk end');
    });
    writer.receipts([row('a')]);
    const flushed = writer.flush();
    // The chunk holds its turn: the pass waits for it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['chunk start']);
    release();
    await Promise.all([chunk, flushed]);
    expect(log).toEqual(['chunk start', 'chunk end', 'pass a']);

    // And the other way round: a chunk asked for during a pass waits for it.
    writer.receipts([row('b')]);
    const second = writer.flush();
    const after = writer.exclusive(async () => {
      log.push('chunk 2');
    });
    await Promise.all([second, after]);
    expect(log.slice(3)).toEqual(['pass b', 'chunk 2']);
  });

  it('gives the turn on after a chunk that failed', async () => {
    const passes: string[] = [];
    const writer = createIndexWriter({
      receipts: async (rows) => {
        passes.push(rows.map((r) => r.id).join(','));
      },
      observations: async () => {},
    });
    await expect(writer.exclusive(async () => Promise.reject(new Error('conflict')))).rejects.toThrow(
      'conflict',
    );
    writer.receipts([row('c')]);
    await writer.flush();
    expect(passes).toEqual(['c']);
  });
});
