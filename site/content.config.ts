/**
 * The site's data: every collection is loaded from the published run files (see `site/lib/published.ts`) and
 * checked against the valibot schemas of `site/lib/schemas.ts` on the way in. Pages read only these
 * collections, through the typed accessors of `site/lib/collections.ts`.
 */

import { defineCollection } from 'astro:content';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { badgeState, latestPublicCheck } from '../core/badge.ts';
import { receiptView } from '../core/format.ts';
import { readIndex, readRunFile, siteInput } from './lib/published.ts';
import { Bazaar, parseFile, Receipt, Rules, Saves, SkipPage, Stats } from './lib/schemas.ts';

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
      const first = await readRunFile(run.dir, 'skips/1.json', SkipPage);
      store.set({ id: '1', data: first });
      for (let page = 2; page <= first.pages; page++) {
        store.set({ id: String(page), data: await readRunFile(run.dir, `skips/${page}.json`, SkipPage) });
      }
    },
  },
});

/** Receipts of the crawl run and of the bazaar check, as the facts their pages show; hosts with their badge. */
async function loadReceipts(onReceipt: (receipt: Record<string, unknown>) => void): Promise<void> {
  const input = siteInput();
  const seen = new Set<string>();
  for (const run of [input.crawlRun, input.bazaarRun]) {
    if (run === null) continue;
    const index = (await readIndex(run.dir).catch(() => [])).filter((line) => !seen.has(line.id));
    for (let i = 0; i < index.length; i += 64) {
      const batch = index.slice(i, i + 64);
      const files = await Promise.all(
        batch.map(async (line) => {
          const file = join(run.dir, 'receipts', `${line.id}.json`);
          return parseFile(Receipt, JSON.parse(await readFile(file, 'utf8')), file);
        }),
      );
      for (const receipt of files) {
        seen.add(receipt.id);
        onReceipt(receipt);
      }
    }
  }
}

type Slim = Record<string, unknown>;
let pass: Promise<{ views: Array<[string, Record<string, unknown>]>; byHost: Map<string, Slim[]> }> | null =
  null;

/** One pass over the receipt files feeds both the receipt pages and the badges. */
function receiptPass() {
  pass ??= (async () => {
    const views: Array<[string, Record<string, unknown>]> = [];
    const byHost = new Map<string, Slim[]>();
    await loadReceipts((receipt) => {
      views.push([receipt.id as string, receiptView(receipt)]);
      const host = hostOf(String(receipt.url));
      if (host === null) return;
      // Only the members the badge reads are kept, not 100,000 whole receipts.
      const { type, mode, expected_source, url, verdict, issued_at, history, id } = receipt;
      const list = byHost.get(host) ?? [];
      list.push({ type, mode, expected_source, url, verdict, issued_at, history, id });
      byHost.set(host, list);
    });
    return { views, byHost };
  })();
  return pass;
}

const receipts = defineCollection({
  loader: {
    name: 'spotcheck-receipts',
    load: async ({ store }: Ctx) => {
      store.clear();
      for (const [id, data] of (await receiptPass()).views) store.set({ id, data });
    },
  },
});

const hosts = defineCollection({
  loader: {
    name: 'spotcheck-hosts',
    load: async ({ store }: Ctx) => {
      store.clear();
      const now = new Date(siteInput().builtAt);
      for (const [host, list] of (await receiptPass()).byHost) {
        const latest = latestPublicCheck(list, host, null);
        const shown = latest === null ? undefined : list.find((r) => r.issued_at === latest.issued_at);
        store.set({
          id: host,
          data: {
            host,
            endpoints: list.length,
            badge: badgeState(latest, now),
            receipt_id: shown?.id ?? null,
            url: shown?.url ?? null,
          },
        });
      }
    },
  },
});

function hostOf(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
}

export const collections = {
  skipPages,
  receipts,
  hosts,
  stats: single('stats.json', Stats, 'crawlRun'),
  saves: single('saves.json', Saves, 'crawlRun'),
  rules: single('rules.json', Rules, 'crawlRun'),
  bazaar: single('bazaar.json', Bazaar, 'bazaarRun'),
};
