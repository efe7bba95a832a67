/**
 * `mergePage` (io/store/_duckdb-reads.ts): a page of the receipts in the table and those still pending, merged newest
 * first, from the part of the table that can fall in the page. Checked against sorting everything, over many random
 * tables, pending sets and pages.
 */
import { describe, expect, it } from 'vitest';
import { mergePage } from '../../../io/store/_duckdb-reads.ts';

type Row = { id: string; issued_at: string };

/** A small deterministic generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const newestFirst = (a: Row, b: Row) =>
  a.issued_at === b.issued_at ? (a.id < b.id ? 1 : -1) : a.issued_at < b.issued_at ? 1 : -1;

describe('a page of the table and the pending receipts together', () => {
  it('is the page of all of them sorted newest first, for any sizes and pages', () => {
    const next = random(31);
    for (let round = 0; round < 400; round++) {
      const n = Math.floor(next() * 30);
      const k = Math.floor(next() * 12);
      // Few distinct times, so ties on `issued_at` are ordered by id.
      const row = (i: number): Row => ({
        id: `r${String(i).padStart(3, '0')}`,
        issued_at: `t${Math.floor(next() * 9)}`,
      });
      const ids = Array.from({ length: n + k }, (_, i) => i).sort(() => next() - 0.5);
      const table = ids.slice(0, n).map(row).sort(newestFirst);
      const pending = ids.slice(n).map(row).sort(newestFirst);
      const all = [...table, ...pending].sort(newestFirst);
      const pageSize = 1 + Math.floor(next() * 8);
      for (let page = 1; page <= Math.ceil(all.length / pageSize) + 1; page++) {
        const offset = (page - 1) * pageSize;
        const from = Math.max(0, offset - pending.length);
        const limit = offset + pageSize - from;
        const got = mergePage(table.slice(from, from + limit), pending, { from, limit, offset, pageSize });
        expect(got, `round ${round} page ${page}`).toEqual(all.slice(offset, offset + pageSize));
      }
    }
  });
});
