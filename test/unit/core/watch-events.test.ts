/**
 * The watch's pure decisions: the events two observations give (`core/watch-events.ts`) and the retry and probe
 * schedules (`core/watch-backoff.ts`).
 */
import { describe, expect, it } from 'vitest';
import { WATCH_LIMITS } from '../../../core/limits.ts';
import { nextProbeAt, nextRetry } from '../../../core/watch-backoff.ts';
import { deriveWatchStep, type WatchObservation, type WatchState } from '../../../core/watch-events.ts';

const terms = { amount_atomic: '10000', pay_to: '0xAa', network: 'eip155:8453', asset: '0xbb' };
const ok: WatchObservation = { verdict: 'pay', reason: 'price_ok', terms, failed: false, receiptId: null };
const failed: WatchObservation = {
  verdict: 'recheck',
  reason: 'timeout',
  terms: null,
  failed: true,
  receiptId: null,
};
const T = '2026-11-24T10:00:00.000Z';
const T2 = '2026-11-24T10:10:00.000Z';

function baseline(): WatchState {
  return deriveWatchStep(null, ok, T, 3).state;
}

describe('deriveWatchStep', () => {
  it('records a first observation as the baseline, with a receipt and no event', () => {
    const step = deriveWatchStep(null, ok, T, 3);
    expect(step).toMatchObject({ changed: true, events: [] });
    expect(step.state).toMatchObject({ verdict: 'pay', terms, failures: 0, down: false, since: T });
  });

  it('writes nothing for unchanged terms and verdict but the last-seen time (a wallet’s case is no change)', () => {
    const step = deriveWatchStep(baseline(), { ...ok, terms: { ...terms, pay_to: '0xaA' } }, T2, 3);
    expect(step.changed).toBe(false);
    expect(step.events).toEqual([]);
    expect(step.state.lastSeen).toBe(T2);
    expect(step.state.since).toBe(T);
  });

  it('gives terms_changed with before and after for a new wallet, and verdict_changed with it', () => {
    const moved = { ...terms, pay_to: '0xcc' };
    const step = deriveWatchStep(
      baseline(),
      { verdict: 'skip', reason: 'pay_to_mismatch', terms: moved, failed: false, receiptId: null },
      T2,
      3,
    );
    expect(step.changed).toBe(true);
    expect(step.events).toEqual([
      { event: 'terms_changed', before: terms, after: moved },
      {
        event: 'verdict_changed',
        before: { verdict: 'pay', reason: 'price_ok' },
        after: { verdict: 'skip', reason: 'pay_to_mismatch' },
      },
    ]);
  });

  it('counts failures, gives down once at the stated number, then recovered on the next success', () => {
    let state = baseline();
    const events: string[] = [];
    for (let i = 0; i < 5; i++) {
      const step = deriveWatchStep(state, failed, T2, 3);
      events.push(...step.events.map((e) => e.event));
      expect(step.state.terms).toEqual(terms);
      state = step.state;
    }
    expect(events).toEqual(['down']);
    expect(state).toMatchObject({ failures: 5, down: true });
    const back = deriveWatchStep(state, ok, T2, 3);
    expect(back.events.map((e) => e.event)).toEqual(['recovered']);
    expect(back.state).toMatchObject({ failures: 0, down: false });
  });

  it('forgets failures short of down once the endpoint answers again', () => {
    const once = deriveWatchStep(baseline(), failed, T2, 3);
    expect(once).toMatchObject({ changed: false, events: [] });
    const again = deriveWatchStep(once.state, ok, T2, 3);
    expect(again).toMatchObject({ changed: false, events: [] });
    expect(again.state.failures).toBe(0);
  });
});

describe('nextRetry', () => {
  it('doubles from the base with jitter in [half, whole], capped, never early', () => {
    const at = (attempts: number, r: number) => nextRetry(attempts, 0, 0, () => r);
    expect(at(1, 0)).toEqual({ kind: 'retry', atMs: WATCH_LIMITS.retryBaseSeconds * 500 });
    expect(at(1, 0.999999)).toEqual({ kind: 'retry', atMs: WATCH_LIMITS.retryBaseSeconds * 1000 });
    expect(at(3, 0)).toEqual({ kind: 'retry', atMs: WATCH_LIMITS.retryBaseSeconds * 2000 });
    expect(at(40, 0.5)).toEqual({ kind: 'retry', atMs: WATCH_LIMITS.retryCapSeconds * 750 });
  });

  it('gives up once the next attempt would fall past the retry window', () => {
    const window = WATCH_LIMITS.retryHours * 3_600_000;
    expect(nextRetry(20, 0, window - 3_600_000, () => 0).kind).toBe('retry');
    expect(nextRetry(20, 0, window - 1000, () => 0)).toEqual({ kind: 'give_up' });
  });
});

describe('nextProbeAt', () => {
  it('jitters the interval down by up to 10 %, never past it, so the 10 % past it is left for a late loop', () => {
    expect(nextProbeAt(0, 600, () => 0)).toBe(540_000);
    expect(nextProbeAt(0, 600, () => 0.5)).toBe(570_000);
    expect(nextProbeAt(0, 600, () => 1)).toBe(600_000);
    expect(nextProbeAt(0, 600, () => 7)).toBe(600_000);
  });
});
