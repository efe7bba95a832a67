/**
 * The DuckDB store's listings: the `listings` table, and the whole of it held in memory by normalized URL, so a check
 * finds its endpoint's listing without a query. An import replaces a source's rows in the table, then in the cache.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { pickListing } from '../../core/listing-dispute.ts';
import type { Listing } from '../../core/model.ts';
import { CHUNK, double, select } from '../duckdb/query.ts';
import { storedDouble } from './_duckdb-index-writes.ts';
import { toListing } from './_rows.ts';
import { hostOf, type Store } from './port.ts';

/** Listings the in-memory cache takes between two yields to the event loop while an import replaces it. */
const LISTING_SLICE = 2000;

/** The listing half of the store port, as the DuckDB store answers it. */
export type DuckDbListings = Pick<Store, 'listing' | 'importListings'>;

/**
 * Reads every listing from `db` into the cache. Imports write through `importDb`, which the store keeps for them
 * alone (`openDuckDbStore` says why).
 */
export async function openListings(
  db: DuckDBConnection,
  importDb: DuckDBConnection,
): Promise<DuckDbListings> {
  let listings = await loadListings(db);
  let importing: Promise<unknown> = Promise.resolve();

  /** Replaces the listings of each source in `rows`, in the table and then in the cache. */
  const importNow = async (rows: Parameters<Store['importListings']>[0]): Promise<number> => {
    const sources = [...new Set(rows.map((row) => row.source))];
    await importDb.run('BEGIN TRANSACTION');
    try {
      for (const source of sources) await importDb.run('DELETE FROM listings WHERE source = ?', [source]);
      for (let i = 0; i < rows.length; i += CHUNK) await insertListings(importDb, rows.slice(i, i + CHUNK));
      await importDb.run('COMMIT');
    } catch (error) {
      await importDb.run('ROLLBACK');
      throw error;
    }
    // The cache follows the same replacement in memory: reading every listing back would hold the event loop
    // for as long as the conversion of the whole table takes (bench/crawl-ingest.ts). The new cache is built
    // beside the old one a slice at a time, then takes its place at once: a check meanwhile sees the old listings
    // or the new ones, never a mix.
    const replaced = new Set(sources);
    const next = new Map<string, Listing[]>();
    let n = 0;
    for (const [url, list] of listings) {
      const kept = list.some((l) => replaced.has(l.source))
        ? list.filter((l) => !replaced.has(l.source))
        : list;
      if (kept.length > 0) next.set(url, kept);
      if (++n % LISTING_SLICE === 0) await yieldToEventLoop();
    }
    const unique = new Map(rows.map((l) => [`${l.source}\u0000${l.method}\u0000${l.urlNorm}`, l]));
    for (const l of unique.values()) {
      const list = next.get(l.urlNorm);
      const listing: Listing = {
        url: l.url,
        method: l.method,
        priceUsd: storedDouble(l.priceUsd),
        network: l.network,
        asset: l.asset,
        payTo: l.payTo,
        source: l.source,
      };
      // A list shared with the old cache is copied before it changes.
      next.set(l.urlNorm, list === undefined ? [listing] : [...list, listing]);
      if (++n % LISTING_SLICE === 0) await yieldToEventLoop();
    }
    listings = next;
    return rows.length;
  };

  return {
    async listing(urlNorm, method) {
      return pickListing(listings.get(urlNorm) ?? [], method);
    },
    importListings(rows) {
      // One import at a time: each is a transaction on `importDb`, and each rebuilds the cache from the last one's.
      const run = importing.then(() => importNow(rows));
      importing = run.catch(() => {});
      return run;
    },
  };
}

async function insertListings(db: DuckDBConnection, rows: Array<Listing & { urlNorm: string }>) {
  if (rows.length === 0) return;
  const values: DuckDBValue[] = [];
  for (const l of rows)
    values.push(
      l.urlNorm,
      l.method,
      l.url,
      double(l.priceUsd),
      l.network,
      l.asset,
      l.payTo,
      l.source,
      hostOf(l.urlNorm),
    );
  const tuple = '(?, ?, ?, CAST(? AS DOUBLE), ?, ?, ?, ?, ?)';
  await db.run(
    `INSERT OR REPLACE INTO listings (url_norm, method, url, price_usd, network, asset, pay_to, source, host)
     VALUES ${rows.map(() => tuple).join(',')}`,
    values,
  );
}

async function loadListings(db: DuckDBConnection): Promise<Map<string, Listing[]>> {
  const rows = await select(db, 'SELECT * FROM listings', []);
  const byUrl = new Map<string, Listing[]>();
  for (const row of rows) {
    const listing = toListing(row);
    const list = byUrl.get(String(row.url_norm)) ?? [];
    list.push(listing);
    byUrl.set(String(row.url_norm), list);
  }
  return byUrl;
}
