import { describe, expect, it } from 'vitest';
import { delistingKey, delistings, shownDelistings } from '../../../core/delisting.ts';

const line = (n: number, source = 'cdp') => ({
  url: `https://s.example/${n}`,
  url_norm: `https://s.example/${n}`,
  method: 'GET',
  host: 's.example',
  source_list: source,
  also_listed_in: [],
  probed_at: '2026-11-01T00:00:00.000Z',
  verdict: 'pay',
});

const input = (listed: number[], previousDelisted: unknown[] = [], at = '2026-11-08T00:00:00.000Z') => ({
  runId: 'run-2',
  at,
  previous: { runId: 'run-1', lines: [line(1), line(2), line(3)], delisted: previousDelisted },
  sources: { cdp: { ok: true, items: 2, note: '', skipped: false } },
  listed: new Set(listed.map((n) => `https://s.example/${n}`)),
  optedOut: () => false,
  limited: false,
});

describe('delisting shown on by-url and the endpoint pages', () => {
  it('shows an endpoint no source lists any more as delisted, with the date and run that found it gone', () => {
    const made = delistings(input([1, 3]));
    const shown = shownDelistings(made.shown);
    expect([...shown.keys()]).toEqual([delistingKey('https://s.example/2', 'GET')]);
    expect(shown.get('GET https://s.example/2')).toEqual({
      delisted_at: '2026-11-08T00:00:00.000Z',
      delisted_in_run: 'run-2',
      source_list: 'cdp',
    });
    // Another method of the same URL is another endpoint: not delisted.
    expect(shown.has(delistingKey('https://s.example/2', 'POST'))).toBe(false);
  });

  it('keeps showing it in later runs, with its first date, and clears it once a source lists it again', () => {
    const first = delistings(input([1, 3])).shown;
    const later = delistings({ ...input([1, 3], first, '2026-11-15T00:00:00.000Z'), previous: null });
    // `previous: null` drops the earlier list too; the next run reads it from the published run.
    expect(later.shown).toEqual([]);
    const next = delistings({
      ...input([1, 3], first, '2026-11-15T00:00:00.000Z'),
      previous: { runId: 'run-2', lines: [line(1), line(3)], delisted: first },
    });
    expect(shownDelistings(next.shown).get('GET https://s.example/2')?.delisted_at).toBe(
      '2026-11-08T00:00:00.000Z',
    );
    const relisted = delistings({
      ...input([1, 2, 3], first, '2026-11-22T00:00:00.000Z'),
      previous: { runId: 'run-3', lines: [line(1), line(3)], delisted: next.shown },
    });
    expect(shownDelistings(relisted.shown).size).toBe(0);
  });

  it('skips entries that are not delistings, and keeps the first (newest) of one endpoint', () => {
    const entry = (at: string) => ({
      event: 'delisted',
      url_norm: 'https://s.example/9',
      method: 'POST',
      delisted_at: at,
      delisted_in_run: `run-${at.slice(8, 10)}`,
      source_list: 'payai',
    });
    const shown = shownDelistings([
      null,
      { event: 'delisted', url_norm: 'https://s.example/8', method: 'GET', delisted_at: 'not a date' },
      {
        event: 'listed',
        url_norm: 'https://s.example/7',
        method: 'GET',
        delisted_at: '2026-11-01T00:00:00Z',
      },
      entry('2026-11-20T00:00:00.000Z'),
      entry('2026-11-10T00:00:00.000Z'),
    ]);
    expect([...shown.entries()]).toEqual([
      [
        'POST https://s.example/9',
        { delisted_at: '2026-11-20T00:00:00.000Z', delisted_in_run: 'run-20', source_list: 'payai' },
      ],
    ]);
  });
});
