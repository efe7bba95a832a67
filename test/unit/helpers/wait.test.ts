import { describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait.ts';

describe('waitFor', () => {
  it('resolves with the first truthy value, looking again after falsy values and throws', async () => {
    let looks = 0;
    const value = await waitFor(
      async () => {
        looks++;
        if (looks === 1) throw new Error('not yet');
        return looks >= 3 && { looks };
      },
      { what: 'three looks', intervalMs: 1 },
    );
    expect(value).toEqual({ looks: 3 });
  });

  it('fails once its deadline has passed, naming what it waited for and the last error', async () => {
    const started = Date.now();
    await expect(
      waitFor(
        () => {
          throw new Error('still down');
        },
        { what: 'the moon', timeoutMs: 50, intervalMs: 5 },
      ),
    ).rejects.toThrow('timed out after 50 ms waiting for the moon (last error: Error: still down)');
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });
});
