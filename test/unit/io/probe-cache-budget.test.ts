/**
 * The probe cache holds at most `maxChars` of headers and bodies: a target answering with the largest header and
 * body the prober accepts evicts older entries instead of growing the heap.
 */
import { describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { createProbeCache } from '../../../io/probe/probe-cache.ts';

const big = (n: number): ProbeOutcome => ({
  kind: 'response',
  probedAt: '2026-11-21T00:00:00.000Z',
  elapsedMs: 1,
  response: {
    status: 402,
    headers: { 'payment-required': 'h'.repeat(n) },
    body: 'b'.repeat(n),
    bodyTruncated: false,
    methodUsed: 'GET',
    finalUrl: 'https://seller.example/x',
    redirects: 0,
  },
});

describe('probe cache budget', () => {
  it('evicts the least recent entries once the stored characters pass maxChars', async () => {
    const cache = createProbeCache({ ttlMs: 60_000, maxEntries: 1000, maxChars: 1_000_000, now: () => 0 });
    for (let i = 0; i < 20; i++) await cache.get(`k${i}`, async () => big(100_000));
    expect(cache.chars).toBeLessThanOrEqual(1_000_000);
    expect(cache.size).toBe(4);
    // The newest are kept: a reuse of k19 runs nothing.
    let ran = 0;
    const again = await cache.get('k19', async () => {
      ran++;
      return big(1);
    });
    expect(again.cached).toBe(true);
    expect(ran).toBe(0);
    // The oldest was evicted and runs again.
    await cache.get('k0', async () => {
      ran++;
      return big(1);
    });
    expect(ran).toBe(1);
  });

  it('keeps one entry even when it alone is over budget, and accounts for replaced entries', async () => {
    let clock = 0;
    const cache = createProbeCache({ ttlMs: 10, maxEntries: 10, maxChars: 1000, now: () => clock });
    await cache.get('a', async () => big(5000));
    expect(cache.size).toBe(1);
    expect(cache.chars).toBeLessThanOrEqual(1000);
    expect((await cache.get('a', async () => big(1))).cached).toBe(true);
    clock = 100;
    await cache.get('a', async () => big(10));
    expect(cache.chars).toBeLessThan(1000);
  });
});
