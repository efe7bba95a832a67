/** The per-host daily budget shared by processes through the day's files. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HOST_DAILY_BASE, HOST_DAILY_PER_LISTING } from '../../../core/politeness.ts';
import { openHostBudget } from '../../../crawl/host-budget.ts';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('the per-host daily budget', () => {
  it('counts a crawl and a bazaar check of the same day together, and refuses past the figure', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sc-budget-'));
    dirs.push(dir);
    const now = new Date('2026-03-01T10:00:00Z');
    const limit = HOST_DAILY_BASE + HOST_DAILY_PER_LISTING * 10;
    const crawl = await openHostBudget({ dir, who: 'crawl-run', now, listed: new Map([['h.example', 10]]) });
    expect(crawl.take('h.example', limit - 5)).toBe(true);
    await crawl.flush();
    // The bazaar check knows no listing counts: the crawl's figure for the host counts.
    const bazaar = await openHostBudget({ dir, who: 'bazaar-run', now, listed: new Map() });
    expect(bazaar.take('h.example', 5)).toBe(true);
    expect(bazaar.take('h.example', 1)).toBe(false);
    expect(bazaar.take('other.example', HOST_DAILY_BASE)).toBe(true);
    expect(bazaar.take('__proto__', HOST_DAILY_BASE)).toBe(true);
    expect(bazaar.take('__proto__', 1)).toBe(false);
    await bazaar.flush();
    // A resumed crawl finds its own counts again; the next day starts afresh.
    const resumed = await openHostBudget({
      dir,
      who: 'crawl-run',
      now,
      listed: new Map([['h.example', 10]]),
    });
    expect(resumed.take('h.example', 1)).toBe(false);
    const tomorrow = await openHostBudget({
      dir,
      who: 'crawl-run-2',
      now: new Date('2026-03-02T00:00:01Z'),
      listed: new Map(),
    });
    expect(tomorrow.take('h.example', HOST_DAILY_BASE)).toBe(true);
  });
});
