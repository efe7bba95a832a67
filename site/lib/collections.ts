/**
 * Typed access to the site's collections. The loaders (`site/content.config.ts`) checked every file against
 * `site/lib/schemas.ts`, so the types here state what was verified, not a hope.
 */
import { getCollection, getEntry } from 'astro:content';
import type { BadgeState } from '../../core/badge.ts';
import type { Bazaar, Rules, SavesShown, SkipPageShown, Stats } from './schemas.ts';

export type HostBadge = {
  host: string;
  endpoints: number;
  badge: BadgeState;
  receipt_id: string | null;
  url: string | null;
};

/** An entry as the loaders stored it; `data` was checked against its schema there. */
type Entry = { data: unknown };

type Singles = { stats: Stats; saves: SavesShown; rules: Rules; bazaar: Bazaar };

/** The one entry of a single-file collection, or null when no run has published it. */
export async function current<K extends keyof Singles>(name: K): Promise<Singles[K] | null> {
  const entry: Entry | undefined = await getEntry(name, 'current');
  return entry ? (entry.data as Singles[K]) : null;
}

/** The skip listing pages, first to last. */
export async function skipPages(): Promise<SkipPageShown[]> {
  const entries: Entry[] = await getCollection('skipPages');
  return entries.map((entry) => entry.data as SkipPageShown).sort((a, b) => a.page - b.page);
}

export async function hostBadges(): Promise<HostBadge[]> {
  const entries: Entry[] = await getCollection('hosts');
  return entries.map((entry) => entry.data as HostBadge).sort((a, b) => (a.host < b.host ? -1 : 1));
}
