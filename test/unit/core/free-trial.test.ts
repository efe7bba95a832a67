import { describe, expect, it } from 'vitest';
import { detectFreeTrial, FREE_TRIAL_HEADERS, FREE_TRIAL_RULES } from '../../../core/free-trial.ts';

describe('detectFreeTrial', () => {
  it.each([
    [{ 'x-free-trial-remaining': '3' }, true, 3, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': '0' }, false, 0, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': ' 7 ' }, true, 7, 'x-free-trial-remaining'],
    [{ 'x-trial-remaining': '1' }, true, 1, 'x-trial-remaining'],
    [{ 'x-trial-remaining': '0' }, false, 0, 'x-trial-remaining'],
    [{ 'x-free-trial': 'true' }, true, null, 'x-free-trial'],
    [{ 'x-free-trial': '1' }, true, null, 'x-free-trial'],
    [{ 'x-free-trial': 'Active' }, true, null, 'x-free-trial'],
    [{ 'x-free-trial': 'false' }, false, null, 'x-free-trial'],
    [{ 'x-free-trial': 'expired' }, false, null, 'x-free-trial'],
    [{ 'x-trial-used': '2/5' }, true, 3, 'x-trial-used'],
    [{ 'x-trial-used': '2 of 5' }, true, 3, 'x-trial-used'],
    [{ 'x-trial-used': '5/5' }, false, 0, 'x-trial-used'],
    [{ 'x-trial-used': '7 / 5' }, false, 0, 'x-trial-used'],
    [{ 'x-trial-used': 'true' }, false, 0, 'x-trial-used'],
  ] as const)('%j → active %s, remaining %s', (headers, active, remaining, header) => {
    expect(detectFreeTrial(headers)).toEqual({ active, remaining, header });
  });

  it.each([
    {},
    { 'content-type': 'application/json' },
    { 'x-free-trial-remaining': 'abc' },
    { 'x-free-trial-remaining': '-1' },
    { 'x-free-trial-remaining': '1.5' },
    { 'x-free-trial-remaining': '' },
    { 'x-free-trial-remaining': '12345678901' },
    { 'x-trial-remaining': 'unlimited' },
    { 'x-trial-used': '2' },
    { 'x-trial-used': 'false' },
    { 'x-trial-used': '2/x' },
    { 'x-free-trial': 'maybe' },
    { 'x-free-trial': '3' },
    { 'x-trial': 'true' },
  ])('ignores unreadable or unknown %j', (headers) => {
    expect(detectFreeTrial(headers)).toEqual({ active: false, remaining: null, header: null });
  });

  it('matches header names case-insensitively', () => {
    expect(detectFreeTrial({ 'X-Free-Trial-Remaining': '2' })).toEqual({
      active: true,
      remaining: 2,
      header: 'x-free-trial-remaining',
    });
  });

  it('lets a count win over a flag', () => {
    expect(detectFreeTrial({ 'x-free-trial': 'true', 'x-free-trial-remaining': '0' }).active).toBe(false);
    expect(detectFreeTrial({ 'x-free-trial': 'false', 'x-trial-remaining': '4' })).toEqual({
      active: true,
      remaining: 4,
      header: 'x-trial-remaining',
    });
  });

  it('falls through a garbage count to the next readable header', () => {
    expect(detectFreeTrial({ 'x-free-trial-remaining': 'lots', 'x-free-trial': 'yes' })).toEqual({
      active: true,
      remaining: null,
      header: 'x-free-trial',
    });
  });

  it('documents every header it reads', () => {
    for (const header of FREE_TRIAL_HEADERS) expect(FREE_TRIAL_RULES[header].length).toBeGreaterThan(10);
    expect(FREE_TRIAL_HEADERS).toEqual(
      expect.arrayContaining(['x-free-trial-remaining', 'x-trial-remaining', 'x-free-trial', 'x-trial-used']),
    );
  });
});
