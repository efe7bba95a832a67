/**
 * Calls that come many at a time, answered by one statement. DuckDB answers a point query or update by scanning
 * the table (an indexed lookup with bound values is not used), so at 100,000 rows one statement per call costs
 * milliseconds each, and one statement over a few hundred calls costs about as much as one of them
 * (BENCHMARKS.md "watches-scale"). The watch store (`io/watches/_duckdb-batch.ts`) and the index's reads of
 * endpoint histories (`io/store/duckdb.ts`) coalesce through here.
 */

/** A queue: runs `work` after every call queued before it. */
export type Serial = <T>(work: () => Promise<T>) => Promise<T>;

/** A new queue of its own. */
export function serialQueue(): Serial {
  let queue: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
}

/**
 * Coalesces calls: the first call queues one job on `serial`; every call made before that job starts joins it, and
 * the job runs `many` once over all of them. `many` answers in the order of its arguments.
 */
export function coalesced<A, R>(serial: Serial, many: (args: A[]) => Promise<R[]>): (arg: A) => Promise<R> {
  let waiting: Array<{ arg: A; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  return (arg) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ arg, resolve, reject });
      if (waiting.length > 1) return;
      void serial(async () => {
        const batch = waiting;
        waiting = [];
        try {
          const out = await many(batch.map((b) => b.arg));
          for (const [i, b] of batch.entries()) b.resolve(out[i] as R);
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      });
    });
}
