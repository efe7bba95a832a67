/**
 * What a free-tier reservation is (docs/api.md §8, docs/api.md §5.6): the keys a call draws on, the units it took,
 * and the UTC day it counts in. The counters themselves are state, behind the port of `io/quota/port.ts` (in memory,
 * or shared in PostgreSQL).
 */

/** One counter a call draws on: `bucket` names the limit (`check`, `check_net`, `dry_run`…), `id` the client. */
export type QuotaKey = { bucket: string; id: string; limit: number };

export type Reservation = {
  day: string;
  keys: QuotaKey[];
  /** Count of the first key after this reservation: what `free_used_today` shows. */
  used: number;
  /** Gives the unit back; a shared quota's release is a database write (a promise). */
  release(): void | Promise<void>;
};

export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | { ok: false; exhausted: QuotaKey; used: number };

/** UTC calendar day of an instant, `YYYY-MM-DD`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}
