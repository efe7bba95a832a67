/**
 * The last paid calls of every service, kept in memory so a lookup reads no table. Lookups take at most `LIMITS`' 20 calls per service, so 20 per service and task, and 20 per
 * service over all tasks, answer every lookup and the reputation; the table stays the record of everything.
 */
import { newestFirst, type PaidCallRecord } from '../../core/catalog.ts';
import type { PaidCallQuery } from './port.ts';
import { hostOf } from './port.ts';

/** Calls kept per service (and per service and task): the largest `n` a lookup accepts (docs/api.md §8). */
export const RECENT_KEPT = 20;

/**
 * Distinct queries whose answers are kept between adds: only those over every service (a task or none, and `n`),
 * which a lookup ranks. Queries for one endpoint or host (a reputation refresh) are small, and kept out so they
 * never push a ranking's answer out. Least recently asked goes first.
 */
const MAX_ANSWERS = 64;

export type RecentPaidCalls = {
  add(record: PaidCallRecord): void;
  /**
   * The store's `paidCalls` answer, when `perService` is within what is kept; null otherwise. The same query answers
   * the same array until the next `add`, so what is computed from an answer can be kept with it (`rankServices`).
   */
  query(query: PaidCallQuery): readonly PaidCallRecord[] | null;
};

/** An empty index; fill it with `add` (any order). */
export function createRecentPaidCalls(): RecentPaidCalls {
  /** service id → its last calls over every task, newest first. */
  const byService = new Map<string, PaidCallRecord[]>();
  /** task → service id → its last calls for that task, newest first. */
  const byTask = new Map<string, Map<string, PaidCallRecord[]>>();
  /** Answers since the last `add`, by query. */
  let answers = new Map<string, readonly PaidCallRecord[]>();

  return {
    add(record) {
      if (answers.size > 0) answers = new Map();
      keep(byService, record.service_id, record);
      const services = byTask.get(record.task) ?? new Map<string, PaidCallRecord[]>();
      byTask.set(record.task, services);
      keep(services, record.service_id, record);
    },
    query({ task, endpoint, host, perService }) {
      if (perService > RECENT_KEPT) return null;
      const kept = endpoint === undefined && host === undefined;
      const key = JSON.stringify([task ?? null, perService]);
      const known = kept ? answers.get(key) : undefined;
      if (known !== undefined) {
        answers.delete(key);
        answers.set(key, known);
        return known;
      }
      const lists =
        task === undefined ? byService : (byTask.get(task) ?? new Map<string, PaidCallRecord[]>());
      const out: PaidCallRecord[] = [];
      for (const [serviceId, calls] of lists) {
        const newest = calls[0];
        if (!newest) continue;
        if (endpoint !== undefined && serviceId !== endpoint && newest.endpoint_url !== endpoint) continue;
        if (host !== undefined && hostOf(newest.endpoint_url) !== host) continue;
        // Records are never mutated after `add` (a new call replaces, never edits), so they are shared, not copied.
        for (const call of calls.slice(0, Math.max(0, Math.floor(perService)))) out.push(call);
      }
      if (!kept) return out;
      if (answers.size >= MAX_ANSWERS) answers.delete(answers.keys().next().value as string);
      answers.set(key, out);
      return out;
    },
  };
}

function keep(map: Map<string, PaidCallRecord[]>, key: string, record: PaidCallRecord): void {
  const list = (map.get(key) ?? []).filter(
    (call) => record.receipt_id === null || call.receipt_id !== record.receipt_id,
  );
  list.push(record);
  list.sort(newestFirst);
  if (list.length > RECENT_KEPT) list.length = RECENT_KEPT;
  map.set(key, list);
}
