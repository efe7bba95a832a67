/**
 * The store in memory: the reference implementation of the store contract, used by fast tests.
 */
import type { HttpMethod, Listing, Observation } from '../core/model.ts';
import { OBSERVATIONS_KEPT, pickListing, type ReceiptRow, type Store } from './store.ts';

/** Creates an empty in-memory store. */
export function createMemoryStore(): Store {
  const receipts = new Map<string, ReceiptRow>();
  const observations = new Map<string, Observation[]>();
  let listings: Array<Listing & { urlNorm: string }> = [];
  const key = (urlNorm: string, method: HttpMethod) => `${method} ${urlNorm}`;

  return {
    indexReceipts(rows) {
      for (const row of rows) if (!receipts.has(row.id)) receipts.set(row.id, row);
    },
    addObservation(urlNorm, method, observation) {
      const list = observations.get(key(urlNorm, method)) ?? [];
      list.unshift(observation);
      list.sort((a, b) => b.observed_at.localeCompare(a.observed_at));
      observations.set(key(urlNorm, method), list.slice(0, OBSERVATIONS_KEPT));
    },
    async observations(urlNorm, method) {
      return [...(observations.get(key(urlNorm, method)) ?? [])];
    },
    async receipt(id) {
      return receipts.get(id)?.body ?? null;
    },
    async latestReceiptByUrl(urlNorm) {
      let best: ReceiptRow | null = null;
      for (const row of receipts.values()) {
        if (row.urlNorm !== urlNorm || row.type !== 'check') continue;
        if (!best || newer(row, best)) best = row;
      }
      return best?.body ?? null;
    },
    async listReceipts({ mode, page, pageSize }) {
      const all = [...receipts.values()]
        .filter((row) => mode === undefined || row.mode === mode)
        .sort((a, b) => (newer(a, b) ? -1 : 1));
      const items = all
        .slice((page - 1) * pageSize, page * pageSize)
        .map(({ body: _b, urlNorm: _u, ...rest }) => rest);
      return { items, total: all.length, page, pageSize };
    },
    async listing(urlNorm, method) {
      return pickListing(
        listings.filter((row) => row.urlNorm === urlNorm).map(({ urlNorm: _u, ...listing }) => listing),
        method,
      );
    },
    async importListings(rows) {
      const sources = new Set(rows.map((row) => row.source));
      listings = [...listings.filter((row) => !sources.has(row.source)), ...rows];
      return rows.length;
    },
    async flush() {},
    async close() {},
  };
}

/** Newest first by issue time, then by id so the order is total. */
function newer(a: ReceiptRow, b: ReceiptRow): boolean {
  return a.issuedAt === b.issuedAt ? a.id > b.id : a.issuedAt > b.issuedAt;
}
