import { describe, expect, it, vi } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { cachedProbe, createProbeCache, probeKey } from '../../../io/probe/probe-cache.ts';

function outcome(detail: string): ProbeOutcome {
  return { kind: 'timeout', detail, probedAt: '2026-01-01T00:00:00.000Z', elapsedMs: 5000 };
}

function setup(ttlMs = 300_000, maxEntries = 100) {
  let clock = 1_000_000;
  const cache = createProbeCache({ ttlMs, maxEntries, now: () => clock });
  return {
    cache,
    advance(ms: number) {
      clock += ms;
    },
  };
}

/** A run whose completion the test controls. */
function deferred() {
  let resolve!: (o: ProbeOutcome) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<ProbeOutcome>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('probeKey', () => {
  it('keys by method and the URL as requested', () => {
    expect(probeKey('https://a.example/x', 'GET')).toBe('GET https://a.example/x');
    expect(probeKey('https://a.example/x', 'POST')).not.toBe(probeKey('https://a.example/x', 'GET'));
  });
});

describe('cachedProbe', () => {
  it('probes exactly the URL its key names, so one URL never answers for another', async () => {
    const { cache } = setup();
    const probe = vi.fn(async (url: string) => outcome(url));
    expect(await cachedProbe(cache, probe, 'https://a.example/paid/', 'GET')).toEqual({
      outcome: outcome('https://a.example/paid/'),
      cached: false,
    });
    const bare = await cachedProbe(cache, probe, 'https://a.example/paid', 'GET');
    expect(bare).toEqual({ outcome: outcome('https://a.example/paid'), cached: false });
    expect(probe.mock.calls).toEqual([
      ['https://a.example/paid/', 'GET'],
      ['https://a.example/paid', 'GET'],
    ]);
    expect((await cachedProbe(cache, probe, 'https://a.example/paid', 'GET')).cached).toBe(true);
  });
});

describe('createProbeCache', () => {
  it('reuses an outcome within the ttl and runs again after it', async () => {
    const { cache, advance } = setup();
    const run = vi.fn(async () => outcome(`run-${run.mock.calls.length}`));
    expect(await cache.get('k', run)).toEqual({ outcome: outcome('run-1'), cached: false });
    advance(299_999);
    expect(await cache.get('k', run)).toEqual({ outcome: outcome('run-1'), cached: true });
    advance(1);
    expect(await cache.get('k', run)).toEqual({ outcome: outcome('run-2'), cached: false });
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('measures the ttl from the start of the probe', async () => {
    const { cache, advance } = setup(1000);
    const d = deferred();
    const first = cache.get('k', () => d.promise);
    advance(800); // the probe itself took 800 ms
    d.resolve(outcome('slow'));
    await first;
    advance(199);
    expect((await cache.get('k', async () => outcome('new'))).cached).toBe(true);
    advance(1);
    expect((await cache.get('k', async () => outcome('new'))).outcome).toEqual(outcome('new'));
  });

  it('keeps keys apart', async () => {
    const { cache } = setup();
    await cache.get('GET a', async () => outcome('a'));
    const b = await cache.get('GET b', async () => outcome('b'));
    expect(b).toEqual({ outcome: outcome('b'), cached: false });
  });

  it('shares one in-flight run among 100 concurrent callers', async () => {
    const { cache } = setup();
    const d = deferred();
    const run = vi.fn(() => d.promise);
    const calls = Array.from({ length: 100 }, () => cache.get('k', run));
    d.resolve(outcome('shared'));
    const results = await Promise.all(calls);
    expect(run).toHaveBeenCalledTimes(1);
    expect(results.every((r) => r.outcome.kind === 'timeout' && r.outcome.detail === 'shared')).toBe(true);
    expect(results.filter((r) => !r.cached)).toHaveLength(1);
    expect(results[0]!.cached).toBe(false);
  });

  it('evicts the least recently used entry past maxEntries', async () => {
    const { cache } = setup(300_000, 3);
    for (const k of ['a', 'b', 'c']) await cache.get(k, async () => outcome(k));
    await cache.get('a', async () => outcome('a-again')); // touch a: b is now the oldest
    await cache.get('d', async () => outcome('d'));
    expect(cache.size).toBe(3);
    const run = vi.fn(async () => outcome('fresh'));
    expect((await cache.get('a', run)).cached).toBe(true);
    expect((await cache.get('c', run)).cached).toBe(true);
    expect((await cache.get('d', run)).cached).toBe(true);
    expect(run).not.toHaveBeenCalled();
    expect(await cache.get('b', run)).toEqual({ outcome: outcome('fresh'), cached: false });
  });

  it('does not store a rejected run, and the sharers see the rejection', async () => {
    const { cache } = setup();
    const d = deferred();
    const first = cache.get('k', () => d.promise);
    const sharer = cache.get('k', async () => outcome('never'));
    d.reject(new Error('bug'));
    await expect(first).rejects.toThrow('bug');
    await expect(sharer).rejects.toThrow('bug');
    expect(cache.size).toBe(0);
    expect(await cache.get('k', async () => outcome('ok'))).toEqual({
      outcome: outcome('ok'),
      cached: false,
    });
  });

  it('treats a run that throws synchronously as a rejection', async () => {
    const { cache } = setup();
    const boom = () => {
      throw new Error('sync');
    };
    await expect(cache.get('k', boom)).rejects.toThrow('sync');
    expect((await cache.get('k', async () => outcome('ok'))).cached).toBe(false);
  });

  it('treats an entry from the future (clock stepped back) as stale', async () => {
    const { cache, advance } = setup();
    await cache.get('k', async () => outcome('old'));
    advance(-10_000);
    expect(await cache.get('k', async () => outcome('new'))).toEqual({
      outcome: outcome('new'),
      cached: false,
    });
  });

  it('reports the ttl in whole seconds', () => {
    expect(setup(300_000).cache.ttlSeconds).toBe(300);
  });

  it('rejects nonsense options', () => {
    expect(() => createProbeCache({ ttlMs: -1, maxEntries: 1, now: () => 0 })).toThrow(RangeError);
    expect(() => createProbeCache({ ttlMs: 1, maxEntries: 0, now: () => 0 })).toThrow(RangeError);
    expect(() => createProbeCache({ ttlMs: 1, maxEntries: 1, maxChars: 0, now: () => 0 })).toThrow(
      RangeError,
    );
  });
});
