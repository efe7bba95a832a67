import { describe, expect, it } from 'vitest';
import { serialFlush } from '../../../io/store/_rows.ts';
import { waitFor } from '../../helpers/wait.ts';

describe('serialFlush', () => {
  it('resolves once a pass started after the call finished, while other callers keep starting passes', async () => {
    let queued = 0;
    const drained: number[] = [];
    const { flush } = serialFlush(
      async () => {
        const taking = queued;
        queued = 0;
        await new Promise((resolve) => setTimeout(resolve, 1));
        drained.push(taking);
      },
      () => queued > 0,
    );
    let loading = true;
    // A loaded server: rows keep arriving and each batch of them asks for a flush of its own.
    const load = async () => {
      while (loading) {
        queued += 5;
        void flush();
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const running = load();
    await waitFor(() => drained.length >= 3, { what: 'the load to have run three passes' });
    queued += 1;
    const passesBefore = drained.length;
    const done = await Promise.race([
      flush().then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 2000)),
    ]);
    loading = false;
    await running;
    expect(done).toBe(true);
    expect(drained.length).toBeGreaterThan(passesBefore);
  });

  it('returns at once when nothing is queued and no pass runs', async () => {
    let passes = 0;
    const { flush } = serialFlush(
      async () => {
        passes++;
      },
      () => false,
    );
    await flush();
    expect(passes).toBe(0);
  });
});
