/**
 * The store in memory: the reference implementation of the store contract, used by fast tests.
 */
import { newestFirst, type PaidCallRecord } from '../core/catalog.ts';
import type { HttpMethod, Listing, Observation } from '../core/model.ts';
import { isPublicState } from '../core/public-state.ts';
import type { HostObservation } from '../core/reputation.ts';
import { endpointOf, hostOf, OBSERVATIONS_KEPT, pickListing, type ReceiptRow, type Store } from './store.ts';

/** Creates an empty in-memory store. */
export function createMemoryStore(): Store {
  const receipts = new Map<string, ReceiptRow>();
  // The host column of the index: a host's receipts and endpoints without looking at any other host's.
  const receiptsByHost = new Map<string, ReceiptRow[]>();
  const endpointsByHost = new Map<string, Set<string>>();
  const observations = new Map<string, Observation[]>();
  let listings: Array<Listing & { urlNorm: string }> = [];
  const paidCalls: PaidCallRecord[] = [];
  const key = (urlNorm: string, method: HttpMethod) => `${method} ${urlNorm}`;
  /** `PUBLIC_FORMS_OF_HOST` of the other stores: a listed form of the row's endpoint, else that of its newest pay. */
  const inPublicForm = (row: ReceiptRow): boolean => {
    const listed = listings.filter((l) => l.urlNorm === row.urlNorm);
    if (listed.length > 0) return listed.some((l) => l.url === row.url && l.method === row.method);
    let form: ReceiptRow | null = null;
    for (const other of receiptsByHost.get(hostOf(row.urlNorm) ?? '') ?? []) {
      if (other.urlNorm !== row.urlNorm || other.verdict !== 'pay' || !isPublicState(other.body)) continue;
      if (form === null || newer(other, form)) form = other;
    }
    return form !== null && form.url === row.url && form.method === row.method;
  };

  const store: Store = {
    indexReceipts(rows) {
      for (const row of rows) {
        if (receipts.has(row.id)) continue;
        receipts.set(row.id, row);
        const host = hostOf(row.urlNorm);
        if (host === null) continue;
        const list = receiptsByHost.get(host) ?? [];
        list.push(row);
        receiptsByHost.set(host, list);
      }
    },
    addObservation(urlNorm, method, observation) {
      const host = hostOf(urlNorm);
      if (host !== null)
        endpointsByHost.set(host, (endpointsByHost.get(host) ?? new Set()).add(key(urlNorm, method)));
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
    async latestReceiptByUrl(urlNorm, form) {
      let best: ReceiptRow | null = null;
      for (const row of receipts.values()) {
        if (row.urlNorm !== urlNorm || row.url !== form.url || row.method !== form.method) continue;
        if (!isPublicState(row.body)) continue;
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
    endpoint: (urlNorm, method) => endpointOf(store, urlNorm, method),
    async importListings(rows) {
      const sources = new Set(rows.map((row) => row.source));
      listings = [...listings.filter((row) => !sources.has(row.source)), ...rows];
      return rows.length;
    },
    async addPaidCall(record) {
      if (record.receipt_id !== null) {
        const at = paidCalls.findIndex((call) => call.receipt_id === record.receipt_id);
        if (at >= 0) paidCalls.splice(at, 1);
      }
      paidCalls.push({ ...record });
    },
    async paidCalls({ task, endpoint, host, perService }) {
      const perServiceCount = new Map<string, number>();
      return paidCalls
        .filter(
          (call) =>
            (task === undefined || call.task === task) &&
            (endpoint === undefined || call.service_id === endpoint || call.endpoint_url === endpoint) &&
            (host === undefined || hostOf(call.endpoint_url) === host),
        )
        .sort((a, b) => newestFirst(a, b) || binary(a.service_id, b.service_id))
        .filter((call) => {
          const seen = perServiceCount.get(call.service_id) ?? 0;
          perServiceCount.set(call.service_id, seen + 1);
          return seen < perService;
        })
        .map((call) => ({ ...call }));
    },
    async observationsByHost(host, limit) {
      const out: HostObservation[] = [];
      for (const endpoint of endpointsByHost.get(host) ?? []) {
        for (const observation of observations.get(endpoint) ?? []) out.push({ ...observation, endpoint });
      }
      return out
        .sort((a, b) => binary(b.observed_at, a.observed_at) || binary(a.endpoint, b.endpoint))
        .slice(0, limit);
    },
    async publicChecksByHost(host, limit) {
      return [...(receiptsByHost.get(host) ?? [])]
        .filter((row) => isPublicState(row.body) && inPublicForm(row))
        .sort((a, b) => (newer(a, b) ? -1 : 1))
        .slice(0, limit)
        .map((row) => row.body);
    },
    async checksByHost(host, limit) {
      return [...(receiptsByHost.get(host) ?? [])]
        .filter((row) => row.type === 'check' && row.verdict !== null)
        .sort((a, b) => (newer(a, b) ? -1 : 1))
        .slice(0, limit)
        .map((row) => ({
          verdict: row.verdict ?? '',
          reason: row.reason ?? '',
          at: row.issuedAt,
          expected_source:
            row.body.expected_source === 'request' || row.body.expected_source === 'listing'
              ? row.body.expected_source
              : null,
        }));
    },
    async flush() {},
    async close() {},
  };
  return store;
}

/** Newest first by issue time, then by id so the order is total. */
function newer(a: ReceiptRow, b: ReceiptRow): boolean {
  return a.issuedAt === b.issuedAt ? a.id > b.id : a.issuedAt > b.issuedAt;
}

/** Code-unit order, as DuckDB compares strings, so both stores break ties alike. */
function binary(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
