import { describe, expect, it } from 'vitest';
import { createProgress, formatProgress } from '../../../crawl/progress.ts';

function recorder(isTTY: boolean) {
  const lines: string[] = [];
  return { out: { isTTY, columns: 100, write: (text: string) => lines.push(text) }, lines };
}

describe('formatProgress', () => {
  it('writes counts, percentage, rate and ETA, with a bar only for a terminal', () => {
    const counts = { done: 25, total: 100, pay: 5, skip: 15, recheck: 5 };
    expect(formatProgress('crawl', counts, 5, null)).toBe(
      'crawl: 25/100 25% 5.0/s ETA 0:15 · pay 5 skip 15 recheck 5',
    );
    expect(formatProgress('crawl', counts, 0.01, 120)).toMatch(
      /^crawl \[#+-+\] 25\/100 25% 0\.0\/s ETA 2:05:00 /,
    );
    expect(formatProgress('crawl', { ...counts, done: 0 }, 0, null)).toContain('ETA --:--');
  });
});

describe('createProgress', () => {
  it('in a log, writes one line every few seconds and a last line at the end', () => {
    let t = 0;
    const { out, lines } = recorder(false);
    const progress = createProgress({ label: 'crawl', total: 10, out, now: () => t, logEveryMs: 5000 });
    for (let i = 0; i < 10; i++) {
      t += 1000;
      progress.tick(i % 2 === 0 ? 'skip' : 'pay');
    }
    progress.finish();
    expect(lines).toEqual([
      'crawl: 1/10 10% 1.0/s ETA 0:09 · pay 0 skip 1 recheck 0\n',
      'crawl: 6/10 60% 1.0/s ETA 0:04 · pay 3 skip 3 recheck 0\n',
      'crawl: 10/10 100% 1.0/s ETA 0:00 · pay 5 skip 5 recheck 0\n',
    ]);
  });

  it('on a terminal, redraws in place and ends the line when finished; resumed work is not in the rate', () => {
    let t = 0;
    const { out, lines } = recorder(true);
    const progress = createProgress({ label: 'crawl', total: 10, out, now: () => t, alreadyDone: 8 });
    t = 2000;
    progress.tick('recheck');
    progress.finish();
    expect(lines.every((line) => line.startsWith('\r\u001b[K'))).toBe(true);
    expect(lines.at(-1)).toMatch(/ 9\/10 90% 0\.5\/s ETA 0:02 .*recheck 1\n$/);
  });
});
