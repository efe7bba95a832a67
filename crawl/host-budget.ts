/**
 * The per-host daily request budget (docs/decisions.md "Politeness"; `/rules.json` `politeness`): every request the
 * crawl, the bazaar check and the watches send to one host in one UTC day counts against one budget,
 * `HOST_DAILY_BASE` plus `HOST_DAILY_PER_LISTING` per endpoint the host lists (`core/politeness.ts`). A host listing 36,000
 * endpoints can be crawled once a day; a host listing one gets no more than 504 requests, however often anything
 * asks.
 *
 * Each process keeps its own counts in `<dir>/<YYYY-MM-DD>/<who>.json` (its run id), written as it goes and at the
 * end, and reads the other files of the day when it opens: processes that run at the same time may each spend what
 * was left when they opened (the budget is a ceiling per process start, not a lock). A run counts against the day it
 * opened its budget.
 */
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostDailyLimit } from '../core/politeness.ts';

/** A process's share of the day's budgets. */
export type HostBudget = {
  /** Takes `n` requests of `host`'s budget; false, taking nothing, when they would go past it. */
  take(host: string, n: number): boolean;
  /** Gives back requests taken and not sent. */
  giveBack(host: string, n: number): void;
  /** Writes this process's counts. */
  flush(): Promise<void>;
};

/** A budget that never refuses (tests, and callers without a data folder). */
export const UNLIMITED_BUDGET: HostBudget = { take: () => true, giveBack: () => {}, flush: async () => {} };

type DayFile = { schema: 1; day: string; counts: Record<string, number>; listed: Record<string, number> };

/**
 * Opens the day's budgets for `who` (a run id: a resumed run finds its own counts again). `listed` gives the
 * endpoints each host lists as this process knows them; the largest figure any process of the day wrote counts.
 * @example const budget = await openHostBudget({ dir: join(dataDir, 'requests'), who: runId, now: new Date(), listed })
 */
export async function openHostBudget(options: {
  dir: string;
  who: string;
  now: Date;
  listed: ReadonlyMap<string, number>;
}): Promise<HostBudget> {
  const day = options.now.toISOString().slice(0, 10);
  const dayDir = join(options.dir, day);
  await mkdir(dayDir, { recursive: true });
  const others = new Map<string, number>();
  const listed = new Map(options.listed);
  // Maps, not objects: a host named `__proto__` is a host like any other.
  const counts = new Map<string, number>();
  for (const name of (await readdir(dayDir)).filter((n) => n.endsWith('.json'))) {
    const file = await readDay(join(dayDir, name));
    if (file === null) continue;
    for (const [host, n] of Object.entries(file.listed)) listed.set(host, Math.max(listed.get(host) ?? 0, n));
    const into = name === `${options.who}.json` ? counts : others;
    for (const [host, n] of Object.entries(file.counts)) into.set(host, (into.get(host) ?? 0) + n);
  }
  const path = join(dayDir, `${options.who}.json`);
  let writing: Promise<void> = Promise.resolve();
  let sinceFlush = 0;
  const flush = () => {
    sinceFlush = 0;
    const own: DayFile = {
      schema: 1,
      day,
      counts: Object.fromEntries(counts),
      listed: Object.fromEntries(options.listed),
    };
    const text = `${JSON.stringify(own)}\n`;
    writing = writing.then(async () => {
      await writeFile(`${path}.tmp`, text);
      await rename(`${path}.tmp`, path);
    });
    return writing;
  };
  return {
    take(host, n) {
      const used = (others.get(host) ?? 0) + (counts.get(host) ?? 0);
      if (used + n > hostDailyLimit(listed.get(host) ?? 0)) return false;
      counts.set(host, (counts.get(host) ?? 0) + n);
      // Written every 1,000 requests as well as at the end: a crash loses at most that many from the count.
      if (++sinceFlush >= 1000) void flush().catch(() => {});
      return true;
    },
    giveBack(host, n) {
      counts.set(host, Math.max(0, (counts.get(host) ?? 0) - n));
    },
    flush,
  };
}

/** A day file, or null when it is not one (a torn write, a stray file). */
async function readDay(path: string): Promise<DayFile | null> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as Partial<DayFile>;
    if (value?.schema !== 1 || !isCounts(value.counts) || !isCounts(value.listed)) return null;
    return value as DayFile;
  } catch {
    return null;
  }
}

function isCounts(value: unknown): value is Record<string, number> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
  );
}
