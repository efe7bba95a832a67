import { describe, expect, it } from 'vitest';
import { coalesced, type Serial } from '../../../io/watches/_duckdb-batch.ts';

/** The store's queue, as `io/watches/duckdb.ts` makes it. */
function queue(): Serial {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>) => {
    const next = tail.then(work, work);
    tail = next.catch(() => undefined);
    return next;
  };
}

describe('coalesced store calls', () => {
  it('joins the calls made while the queue is busy into one run, answering each caller in order', async () => {
    const serial = queue();
    const runs: number[][] = [];
    const double = coalesced(serial, async (xs: number[]) => {
      runs.push(xs);
      return xs.map((x) => x * 2);
    });
    const { promise: gate, resolve: release } = Promise.withResolvers<void>();
    const busy = serial(() => gate);
    const answers = Promise.all([double(1), double(2), double(3)]);
    release();
    await busy;
    expect(await answers).toEqual([2, 4, 6]);
    expect(runs).toEqual([[1, 2, 3]]);
    expect(await double(4)).toBe(8);
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('rejects every caller of a run that failed, and runs the next calls afresh', async () => {
    const serial = queue();
    let fail = true;
    const call = coalesced(serial, async (xs: string[]) => {
      if (fail) throw new Error('disk full');
      return xs;
    });
    const first = [call('a'), call('b')].map((p) => p.catch((e: Error) => e.message));
    expect(await Promise.all(first)).toEqual(['disk full', 'disk full']);
    fail = false;
    expect(await call('c')).toBe('c');
  });
});
