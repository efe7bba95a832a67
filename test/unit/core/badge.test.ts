import { describe, expect, it } from 'vitest';
import {
  BADGE_FRESH_MS,
  badgePathKey,
  badgeState,
  isBadgeHost,
  latestPublicCheck,
  latestPublicChecksByPath,
  shieldsEndpoint,
} from '../../../core/badge.ts';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const HOUR = 3_600_000;

describe('badgeState (docs/api.md §3.3)', () => {
  it('is green with the stable days when the latest check is pay and under 72 h old', () => {
    const state = badgeState({ verdict: 'pay', issued_at: ago(71 * HOUR), stable_for_days: 12 }, NOW);
    expect(state).toMatchObject({ state: 'pay', color: 'green', message: 'pay · stable 12 days' });
    expect(badgeState({ verdict: 'pay', issued_at: ago(HOUR), stable_for_days: 1 }, NOW).message).toBe(
      'pay · stable 1 day',
    );
    expect(badgeState({ verdict: 'pay', issued_at: ago(HOUR), stable_for_days: null }, NOW).message).toBe(
      'pay · stable 0 days',
    );
  });

  it('turns grey stale at exactly 72 h', () => {
    const edge = badgeState({ verdict: 'pay', issued_at: ago(BADGE_FRESH_MS), stable_for_days: 5 }, NOW);
    expect(edge).toMatchObject({ state: 'stale', color: 'grey', message: 'stale' });
    const before = badgeState(
      { verdict: 'pay', issued_at: ago(BADGE_FRESH_MS - 1000), stable_for_days: 5 },
      NOW,
    );
    expect(before.color).toBe('green');
  });

  it('is grey not verified without a check or when the latest check is not pay, however fresh', () => {
    expect(badgeState(null, NOW)).toMatchObject({
      state: 'not_verified',
      message: 'not verified',
      checked_at: null,
    });
    for (const verdict of ['skip', 'recheck']) {
      expect(badgeState({ verdict, issued_at: ago(1000), stable_for_days: 3 }, NOW).state).toBe(
        'not_verified',
      );
    }
    expect(badgeState({ verdict: 'pay', issued_at: 'yesterday', stable_for_days: 3 }, NOW).state).toBe(
      'not_verified',
    );
  });

  it('is never cached past the moment a green badge turns grey', () => {
    const late = badgeState(
      { verdict: 'pay', issued_at: ago(BADGE_FRESH_MS - 42_000), stable_for_days: 2 },
      NOW,
    );
    expect(late.max_age_s).toBe(42);
    expect(badgeState({ verdict: 'pay', issued_at: ago(HOUR), stable_for_days: 2 }, NOW).max_age_s).toBe(300);
    expect(badgeState(null, NOW).max_age_s).toBe(300);
  });
});

describe('latestPublicCheck', () => {
  const receipt = (url: string, verdict: string, issued: string, extra: Record<string, unknown> = {}) => ({
    type: 'check',
    mode: 'live',
    expected_source: 'listing',
    url,
    verdict,
    issued_at: issued,
    history: { stable_for_days: 4 },
    ...extra,
  });

  it('takes the newest check of the host, whatever the order', () => {
    const receipts = [
      receipt('https://a.example/x', 'skip', ago(3 * HOUR)),
      receipt('https://a.example/y', 'pay', ago(HOUR)),
      receipt('https://b.example/y', 'skip', ago(60_000)),
    ];
    expect(latestPublicCheck(receipts, 'a.example', null)).toEqual({
      verdict: 'pay',
      issued_at: ago(HOUR),
      stable_for_days: 4,
    });
    expect(latestPublicCheck(receipts, 'c.example', null)).toBeNull();
  });

  it('narrows to an exact path when one is asked, trailing slash ignored', () => {
    const receipts = [
      receipt('https://a.example/x/', 'skip', ago(3 * HOUR)),
      receipt('https://a.example/y', 'pay', ago(HOUR)),
    ];
    expect(latestPublicCheck(receipts, 'a.example', '/x')?.verdict).toBe('skip');
    expect(latestPublicCheck(receipts, 'a.example', '/z')).toBeNull();
  });

  it('ignores dry runs and checks against a caller-supplied expectation', () => {
    const receipts = [
      receipt('https://a.example/x', 'pay', ago(3 * HOUR)),
      receipt('https://a.example/x', 'skip', ago(2 * HOUR), { mode: 'dry-run' }),
      receipt('https://a.example/x', 'skip', ago(HOUR), { expected_source: 'request' }),
      receipt('https://a.example/x', 'skip', ago(60_000), { type: 'payment-status' }),
    ];
    expect(latestPublicCheck(receipts, 'a.example', null)?.verdict).toBe('pay');
  });

  it('keeps the port as part of the host', () => {
    const receipts = [receipt('http://a.example:8080/x', 'pay', ago(HOUR))];
    expect(latestPublicCheck(receipts, 'a.example', null)).toBeNull();
    expect(latestPublicCheck(receipts, 'a.example:8080', null)?.verdict).toBe('pay');
  });
});

describe('latestPublicChecksByPath', () => {
  const receipt = (url: string, verdict: string, issued: string, extra: Record<string, unknown> = {}) => ({
    type: 'check',
    mode: 'live',
    expected_source: 'listing',
    url,
    verdict,
    issued_at: issued,
    history: { stable_for_days: 2 },
    ...extra,
  });

  it('answers every path exactly as latestPublicCheck does, from one pass', () => {
    const receipts = [
      receipt('https://a.example/x/', 'skip', ago(3 * HOUR)),
      receipt('https://a.example/x', 'pay', ago(2 * HOUR)),
      receipt('https://a.example/y?q=1', 'pay', ago(HOUR)),
      receipt('https://a.example/y', 'skip', ago(60_000), { mode: 'dry-run' }),
      receipt('https://a.example/z', 'skip', ago(60_000), { expected_source: 'request' }),
      receipt('https://a.example:8080/x', 'skip', ago(30_000)),
      receipt('https://b.example/x', 'skip', ago(30_000)),
      receipt('https://a.example/', 'pay', ago(10_000)),
      receipt('not a url', 'pay', ago(10_000)),
    ];
    const byPath = latestPublicChecksByPath(receipts, 'a.example');
    for (const path of ['/', '/x', '/x/', '/x//', '/y', '/y/', '/z', '/nobody', '/X']) {
      expect(byPath.get(badgePathKey(path)) ?? null, path).toEqual(
        latestPublicCheck(receipts, 'a.example', path),
      );
    }
    expect(byPath.get(badgePathKey('/x'))?.verdict).toBe('pay');
    expect([...byPath.keys()].sort()).toEqual(['', '/x', '/y']);
  });
});

describe('isBadgeHost and shieldsEndpoint', () => {
  it('accepts hosts as the receipts write them and refuses anything that could be a path', () => {
    for (const host of [
      'a.example',
      'api.x-y.example:8443',
      '127.0.0.1:9000',
      '[::1]:8080',
      'xn--bcher-kva.example',
    ])
      expect(isBadgeHost(host)).toBe(true);
    for (const host of ['', '../etc', 'A.example', 'a.example/x', 'a..example', 'a.example:', 'a b'])
      expect(isBadgeHost(host)).toBe(false);
  });

  it('maps the colours to Shields names and never asks Shields for less than its 300 s floor', () => {
    const green = shieldsEndpoint(
      badgeState({ verdict: 'pay', issued_at: ago(BADGE_FRESH_MS - 5000), stable_for_days: 2 }, NOW),
    );
    expect(green).toEqual({
      schemaVersion: 1,
      label: 'spotcheck',
      message: 'pay · stable 2 days',
      color: 'brightgreen',
      cacheSeconds: 300,
    });
    expect(shieldsEndpoint(badgeState(null, NOW)).color).toBe('lightgrey');
  });
});
