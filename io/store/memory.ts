/**
 * The store in memory: the reference implementation of the store contract, used by fast tests.
 */

import { newestFirst, type PaidCallRecord } from '../../core/catalog.ts';
import { LIMITS } from '../../core/limits.ts';
import { pickListing } from '../../core/listing-dispute.ts';
import type { HttpMethod, Listing, Observation } from '../../core/model.ts';
import { isPublicState } from '../../core/public-state.ts';
import type { HostCheck, HostObservation } from '../../core/reputation.ts';
import { endpointOf, hostOf, type PaidCallQuery, type ReceiptRow, type Store } from './port.ts';

/** Creates an empty in-memory store. */
export function createMemoryStore(): Store {
  const state: MemoryState = {
    receipts: new Map(),
    receiptsByHost: new Map(),
    endpointsByHost: new Map(),
    observations: new Map(),
    listings: [],
    paidCalls: [],
  };
  const store: Store = {
    indexReceipts: (rows) => indexReceipts(state, rows),
    addObservation: (urlNorm, method, observation) => addObservation(state, urlNorm, method, observation),
    async importRunRows(receipts, observations) {
      indexReceipts(state, receipts);
      for (const [urlNorm, method, observation] of observations)
        addObservation(state, urlNorm, method, observation);
    },
    observations: async (urlNorm, method) => [...(state.observations.get(key(urlNorm, method)) ?? [])],
    receipt: async (id) => state.receipts.get(id)?.body ?? null,
    latestReceiptByUrl: async (urlNorm, form) => latestReceiptByUrl(state, urlNorm, form),
    listReceipts: async (query) => listReceipts(state, query),
    listing: async (urlNorm, method) =>
      pickListing(
        state.listings.filter((row) => row.urlNorm === urlNorm).map(({ urlNorm: _u, ...listing }) => listing),
        method,
      ),
    endpoint: (urlNorm, method) => endpointOf(store, urlNorm, method),
    async importListings(rows) {
      const sources = new Set(rows.map((row) => row.source));
      state.listings = [...state.listings.filter((row) => !sources.has(row.source)), ...rows];
      return rows.length;
    },
    async addPaidCall(record) {
      if (record.receipt_id !== null) {
        const at = state.paidCalls.findIndex((call) => call.receipt_id === record.receipt_id);
        if (at >= 0) state.paidCalls.splice(at, 1);
      }
      state.paidCalls.push({ ...record });
    },
    paidCalls: async (query) => paidCalls(state, query),
    observationsByHost: async (host, limit) => observationsByHost(state, host, limit),
    publicChecksByHost: async (host, limit) => publicChecksByHost(state, host, limit),
    checksByHost: async (host, limit) => checksByHost(state, host, limit),
    async flush() {},
    async close() {},
  };
  return store;
}

/** Everything the memory store holds. */
type MemoryState = {
  readonly receipts: Map<string, ReceiptRow>;
  /** The host column of the index: a host's receipts and endpoints without looking at any other host's. */
  readonly receiptsByHost: Map<string, ReceiptRow[]>;
  readonly endpointsByHost: Map<string, Set<string>>;
  readonly observations: Map<string, Observation[]>;
  listings: Array<Listing & { urlNorm: string }>;
  readonly paidCalls: PaidCallRecord[];
};

const key = (urlNorm: string, method: HttpMethod) => `${method} ${urlNorm}`;

function indexReceipts(state: MemoryState, rows: readonly ReceiptRow[]): void {
  for (const row of rows) {
    if (state.receipts.has(row.id)) continue;
    state.receipts.set(row.id, row);
    const host = hostOf(row.urlNorm);
    if (host === null) continue;
    const list = state.receiptsByHost.get(host) ?? [];
    list.push(row);
    state.receiptsByHost.set(host, list);
  }
}

function addObservation(
  state: MemoryState,
  urlNorm: string,
  method: HttpMethod,
  observation: Observation,
): void {
  const host = hostOf(urlNorm);
  if (host !== null)
    state.endpointsByHost.set(host, (state.endpointsByHost.get(host) ?? new Set()).add(key(urlNorm, method)));
  const list = state.observations.get(key(urlNorm, method)) ?? [];
  list.unshift(observation);
  list.sort((a, b) => b.observed_at.localeCompare(a.observed_at));
  state.observations.set(key(urlNorm, method), list.slice(0, LIMITS.historyKept));
}

function latestReceiptByUrl(
  state: MemoryState,
  urlNorm: string,
  form: { url: string; method: HttpMethod },
): Record<string, unknown> | null {
  let best: ReceiptRow | null = null;
  for (const row of state.receipts.values()) {
    if (row.urlNorm !== urlNorm || row.url !== form.url || row.method !== form.method) continue;
    if (!isPublicState(row.body)) continue;
    if (!best || newer(row, best)) best = row;
  }
  return best?.body ?? null;
}

function listReceipts(state: MemoryState, { mode, page, pageSize }: Parameters<Store['listReceipts']>[0]) {
  const all = [...state.receipts.values()]
    .filter((row) => mode === undefined || row.mode === mode)
    .sort((a, b) => (newer(a, b) ? -1 : 1));
  const items = all
    .slice((page - 1) * pageSize, page * pageSize)
    .map(({ body: _b, urlNorm: _u, ...rest }) => rest);
  return { items, total: all.length, page, pageSize };
}

function paidCalls(
  state: MemoryState,
  { task, endpoint, host, perService }: PaidCallQuery,
): PaidCallRecord[] {
  const perServiceCount = new Map<string, number>();
  return state.paidCalls
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
}

function observationsByHost(state: MemoryState, host: string, limit: number): HostObservation[] {
  const out: HostObservation[] = [];
  for (const endpoint of state.endpointsByHost.get(host) ?? []) {
    for (const observation of state.observations.get(endpoint) ?? []) out.push({ ...observation, endpoint });
  }
  return out
    .sort((a, b) => binary(b.observed_at, a.observed_at) || binary(a.endpoint, b.endpoint))
    .slice(0, limit);
}

function publicChecksByHost(state: MemoryState, host: string, limit: number): Record<string, unknown>[] {
  return [...(state.receiptsByHost.get(host) ?? [])]
    .filter((row) => isPublicState(row.body) && inPublicForm(state, row))
    .sort((a, b) => (newer(a, b) ? -1 : 1))
    .slice(0, limit)
    .map((row) => row.body);
}

/** `PUBLIC_FORMS_OF_HOST` of the other stores: a listed form of the row's endpoint, else that of its newest pay. */
function inPublicForm(state: MemoryState, row: ReceiptRow): boolean {
  const listed = state.listings.filter((l) => l.urlNorm === row.urlNorm);
  if (listed.length > 0) return listed.some((l) => l.url === row.url && l.method === row.method);
  let form: ReceiptRow | null = null;
  for (const other of state.receiptsByHost.get(hostOf(row.urlNorm) ?? '') ?? []) {
    if (other.urlNorm !== row.urlNorm || other.verdict !== 'pay' || !isPublicState(other.body)) continue;
    if (form === null || newer(other, form)) form = other;
  }
  return form !== null && form.url === row.url && form.method === row.method;
}

function checksByHost(state: MemoryState, host: string, limit: number): HostCheck[] {
  return [...(state.receiptsByHost.get(host) ?? [])]
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
}

/** Newest first by issue time, then by id so the order is total. */
function newer(a: ReceiptRow, b: ReceiptRow): boolean {
  return a.issuedAt === b.issuedAt ? a.id > b.id : a.issuedAt > b.issuedAt;
}

/** Code-unit order, as DuckDB compares strings, so both stores break ties alike. */
function binary(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
