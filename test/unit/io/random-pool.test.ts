import { describe, expect, it } from 'vitest';
import { pooledRandom } from '../../../io/random-pool.ts';

describe('pooledRandom', () => {
  it('hands out slices of the asked length that never repeat, across pool refills', () => {
    const random = pooledRandom();
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const bytes = random(16);
      expect(bytes.length).toBe(16);
      seen.add(Buffer.from(bytes).toString('hex'));
    }
    expect(seen.size).toBe(1000);
    expect(random(5000).length).toBe(5000);
  });

  it('leaves a slice already handed out unchanged when the pool is replaced', () => {
    const random = pooledRandom();
    const first = random(16);
    const copy = Buffer.from(first).toString('hex');
    for (let i = 0; i < 600; i++) random(16);
    expect(Buffer.from(first).toString('hex')).toBe(copy);
  });
});
