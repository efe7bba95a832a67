/**
 * The DuckDB store's listings: the `listings` table, and the whole of it held in memory by normalized URL, so a check
 * finds its endpoint's listing without a query. An import replaces a source's rows in the table, then in the cache.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { pickListing } from '../../core/listing-dispute.ts';
import type { Listing } from '../../core/model.ts';
import { select } from '../duckdb/query.ts';
import { storedDouble } from './_duckdb-index-writes.ts';
import { toListing } from './_rows.ts';
import { hostOf, type Store } from './port.ts';

/** Listings appended, or taken by the in-memory cache, between two yields to the event loop during an import. */
const LISTING_SLICE = 1000;

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
    // Last row wins for one (url, method, source), as in the cache below.
    const unique = new Map(rows.map((l) => [`${l.source}\u0000${l.method}\u0000${l.urlNorm}`, l]));
    await stageListings(importDb, [...unique.values()]);
    await importDb.run('BEGIN TRANSACTION');
    try {
      await importDb.run(UPSERT_STAGED);
      await importDb.run(DELETE_UNSTAGED);
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

const LISTING_COLUMNS = 'url_norm, method, url, price_usd, network, asset, pay_to, source, host';

/**
 * The staged listings go in as an upsert, then the rows of their sources that are no longer listed go: deleting a
 * source's rows and inserting them again in one transaction cost DuckDB about 1.5 ms a row (its key index keeps the
 * deleted keys until commit), 75 s for a run of 50,000 listings (bench/crawl-ingest.ts); the upsert and the
 * anti-join delete take a few seconds. `host` follows from `url_norm`, a key column, so it never changes.
 */
const UPSERT_STAGED = `INSERT INTO listings (${LISTING_COLUMNS}) SELECT ${LISTING_COLUMNS} FROM temp.listings_stage
  ON CONFLICT DO UPDATE SET url = excluded.url, price_usd = excluded.price_usd, network = excluded.network,
    asset = excluded.asset, pay_to = excluded.pay_to`;
const DELETE_UNSTAGED = `DELETE FROM listings WHERE source IN (SELECT DISTINCT source FROM temp.listings_stage)
  AND NOT EXISTS (SELECT 1 FROM temp.listings_stage s
    WHERE s.url_norm = listings.url_norm AND s.method = listings.method AND s.source = listings.source)`;

/**
 * Writes `rows` (unique by source, method and URL) into a staging table of `db`'s own through an appender, a slice
 * at a time between yields to the event loop: binding nine parameters a row cost DuckDB more than the rows did.
 */
async function stageListings(
  db: DuckDBConnection,
  rows: Array<Listing & { urlNorm: string }>,
): Promise<void> {
  // Made anew rather than emptied: DuckDB keeps the memory of rows deleted from a temporary table.
  await db.run(
    `CREATE OR REPLACE TEMP TABLE listings_stage AS SELECT ${LISTING_COLUMNS} FROM listings LIMIT 0`,
  );
  const appender = await db.createAppender('listings_stage', 'main', 'temp');
  try {
    for (let i = 0; i < rows.length; i++) {
      const l = rows[i] as Listing & { urlNorm: string };
      appender.appendVarchar(l.urlNorm);
      appender.appendVarchar(l.method);
      appender.appendVarchar(l.url);
      const price = storedDouble(l.priceUsd);
      if (price === null) appender.appendNull();
      else appender.appendDouble(price);
      for (const value of [l.network, l.asset, l.payTo, l.source, hostOf(l.urlNorm)]) {
        if (value === null) appender.appendNull();
        else appender.appendVarchar(value);
      }
      appender.endRow();
      if ((i + 1) % LISTING_SLICE === 0) {
        appender.flushSync();
        await yieldToEventLoop();
      }
    }
  } finally {
    appender.closeSync();
  }
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
