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

  it.each([{}, { 'content-type': 'application/json' }, { 'x-trial': 'true' }, { 'x-free-trial-count': '3' }])(
    'finds no trial without a recognized header: %j',
    (headers) => {
      expect(detectFreeTrial(headers)).toEqual({ active: false, remaining: null, header: null });
    },
  );

  // A recognized header is a trial announced (docs/decisions.md "Free-trial headers"): a value that does not say
  // the trial is over announces one whose count is unknown. Before, these values were ignored and the seller got
  // the verdict of its terms (`pay`).
  it.each([
    [{ 'x-free-trial': 'unlimited' }, 'x-free-trial'],
    [{ 'x-free-trial': 'n/a' }, 'x-free-trial'],
    [{ 'x-free-trial': 'maybe' }, 'x-free-trial'],
    [{ 'x-free-trial': '3' }, 'x-free-trial'],
    [{ 'x-free-trial': '' }, 'x-free-trial'],
    [{ 'x-free-trial-remaining': 'unlimited' }, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': 'n/a' }, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': 'abc' }, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': '-1' }, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': '1.5' }, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': '3, 4' }, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': '' }, 'x-free-trial-remaining'],
    [{ 'x-free-trial-remaining': '   ' }, 'x-free-trial-remaining'],
    [{ 'x-trial-remaining': 'unlimited' }, 'x-trial-remaining'],
    [{ 'x-trial-used': '2' }, 'x-trial-used'],
    [{ 'x-trial-used': '0' }, 'x-trial-used'],
    [{ 'x-trial-used': 'false' }, 'x-trial-used'],
    [{ 'x-trial-used': '2/x' }, 'x-trial-used'],
    [{ 'x-trial-used': '' }, 'x-trial-used'],
  ] as const)('%j announces a trial with no count', (headers, header) => {
    expect(detectFreeTrial(headers)).toEqual({ active: true, remaining: null, header });
  });

  it('reads any whole count a number can hold exactly, with leading zeros', () => {
    expect(detectFreeTrial({ 'x-free-trial-remaining': '12345678901' })).toEqual({
      active: true,
      remaining: 12345678901,
      header: 'x-free-trial-remaining',
    });
    expect(detectFreeTrial({ 'x-trial-remaining': '007' }).remaining).toBe(7);
    expect(detectFreeTrial({ 'x-trial-used': '2/12345678901' }).remaining).toBe(12345678899);
    // Past 2^53 a count cannot be carried exactly in a receipt: announced, count unknown.
    for (const count of ['9007199254740993', '9'.repeat(400)])
      expect(detectFreeTrial({ 'x-free-trial-remaining': count })).toEqual({
        active: true,
        remaining: null,
        header: 'x-free-trial-remaining',
      });
  });

  it('lets a header that says the trial is over outrank one that cannot be read', () => {
    expect(detectFreeTrial({ 'x-free-trial-remaining': 'unlimited', 'x-free-trial': 'false' })).toEqual({
      active: false,
      remaining: null,
      header: 'x-free-trial',
    });
    expect(detectFreeTrial({ 'x-trial-used': '3', 'x-trial-remaining': '0' })).toEqual({
      active: false,
      remaining: 0,
      header: 'x-trial-remaining',
    });
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
