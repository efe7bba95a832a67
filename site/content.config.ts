/**
 * The site's data: every collection is loaded from the published run files (see `site/lib/published.ts`) and
 * checked against the valibot schemas of `site/lib/schemas.ts` on the way in. Pages read only these
 * collections, through the typed accessors of `site/lib/collections.ts`.
 */

import { defineCollection } from 'astro:content';
import { type BadgeCheck, badgeState, latestPublicCheck } from '../core/badge.ts';
import { readRunFile, siteInput } from './lib/published.ts';
import { type IndexedReceipt, readReceipt, receiptFile, receiptsByHost } from './lib/receipts.ts';
import { Bazaar, Rules, SavesShown, SkipPageShown, Stats } from './lib/schemas.ts';

/** How many of a host's newest receipts are read to find its latest public check. */
const NEWEST_READ = 50;

type Store = { clear(): void; set(entry: { id: string; data: Record<string, unknown> }): boolean };
type Ctx = { store: Store };

/** A collection of one entry, `current`, read from a file of the crawl (or bazaar) run; empty without a run. */
function single(name: string, schema: Parameters<typeof readRunFile>[2], from: 'crawlRun' | 'bazaarRun') {
  return defineCollection({
    loader: {
      name: `spotcheck-${name}`,
      load: async ({ store }: Ctx) => {
        store.clear();
        const run = siteInput()[from];
        if (run === null) return;
        store.set({
          id: 'current',
          data: (await readRunFile(run.dir, name, schema)) as Record<string, unknown>,
        });
      },
    },
  });
}

const skipPages = defineCollection({
  loader: {
    name: 'spotcheck-skip-pages',
    load: async ({ store }: Ctx) => {
      store.clear();
      const run = siteInput().crawlRun;
      if (run === null) return;
      const first = await readRunFile(run.dir, 'skips/1.json', SkipPageShown);
      store.set({ id: '1', data: first });
      for (let page = 2; page <= first.pages; page++) {
        store.set({
          id: String(page),
          data: await readRunFile(run.dir, `skips/${page}.json`, SkipPageShown),
        });
      }
    },
  },
});

/**
 * Each host of the run with its badge as of the build: the newest public check, found by reading the host's
 * receipt files newest first (the index alone does not say whether a receipt may stand for the public state).
 */
const hosts = defineCollection({
  loader: {
    name: 'spotcheck-hosts',
    load: async ({ store }: Ctx) => {
      store.clear();
      const input = siteInput();
      const now = new Date(input.builtAt);
      for (const [host, receipts] of await receiptsByHost(input, NEWEST_READ)) {
        let latest: BadgeCheck | null = null;
        let shown: IndexedReceipt | null = null;
        for (const receipt of receipts.newest) {
          latest = latestPublicCheck(
            [await readReceipt(receiptFile(receipt.runDir, receipt.id))],
            host,
            null,
          );
          if (latest !== null) {
            shown = receipt;
            break;
          }
        }
        store.set({
          id: host,
          data: {
            host,
            endpoints: receipts.endpoints,
            badge: badgeState(latest, now),
            receipt_id: shown?.id ?? null,
            url: shown?.url ?? null,
          },
        });
      }
    },
  },
});

export const collections = {
  skipPages,
  hosts,
  stats: single('stats.json', Stats, 'crawlRun'),
  saves: single('saves.json', SavesShown, 'crawlRun'),
  rules: single('rules.json', Rules, 'crawlRun'),
  bazaar: single('bazaar.json', Bazaar, 'bazaarRun'),
};
