/**
 * The free quota of one process (`port.ts`): counters per UTC day in a map.
 *
 * A reservation is taken synchronously, before any await, so concurrent requests are counted exactly: with a
 * limit of 5, a hundred parallel calls give five reservations and ninety-five refusals. A reservation is
 * committed by the durable record of the answer it paid for (the journal), and released when no answer is
 * given (for example `chain_unavailable`), so the day's count never includes a call that was not served.
 */
import { type QuotaKey, type ReserveResult, utcDay } from '../../core/quota.ts';
import type { QuotaPort } from './port.ts';

/** The in-memory quota: the port's decision taken synchronously, plus what the journal's replay needs. */
export type Quota = {
  /** Takes one unit of every key, or none: `exhausted` names the first key at its limit. */
  reserve(keys: QuotaKey[]): ReserveResult;
  /** Units used today of one key. */
  used(bucket: string, id: string): number;
  /** Replays a committed use (journal replay at start-up); uses of other days are ignored. */
  restore(day: string, bucket: string, id: string): void;
};

/** The port over the in-memory quota: the decision is still taken at the call, before the caller's first await. */
export function quotaPort(quota: Quota): QuotaPort {
  return { reserve: (keys) => Promise.resolve(quota.reserve(keys)) };
}

/**
 * Creates the in-memory quota ledger.
 *
 * @example
 * const quota = createQuota({ now: () => new Date() });
 * const r = quota.reserve([{ bucket: 'check', id: 'ip:…', limit: 5 }]);
 */
export function createQuota(options: { now: () => Date }): Quota {
  let day = utcDay(options.now());
  let counts = new Map<string, number>();

  const roll = (): string => {
    const today = utcDay(options.now());
    if (today !== day) {
      day = today;
      counts = new Map();
    }
    return day;
  };
  const name = (bucket: string, id: string) => `${bucket}\u0000${id}`;

  return {
    reserve(keys) {
      const today = roll();
      for (const key of keys) {
        const used = counts.get(name(key.bucket, key.id)) ?? 0;
        if (used >= key.limit) return { ok: false, exhausted: key, used };
      }
      for (const key of keys)
        counts.set(name(key.bucket, key.id), (counts.get(name(key.bucket, key.id)) ?? 0) + 1);
      let released = false;
      const first = keys[0];
      return {
        ok: true,
        reservation: {
          day: today,
          keys,
          used: first ? (counts.get(name(first.bucket, first.id)) ?? 0) : 0,
          release() {
            // A release after midnight has nothing to give back: the counters of that day are gone.
            if (released || day !== today) return;
            released = true;
            for (const key of keys) {
              const n = counts.get(name(key.bucket, key.id)) ?? 0;
              counts.set(name(key.bucket, key.id), Math.max(0, n - 1));
            }
          },
        },
      };
    },
    used(bucket, id) {
      roll();
      return counts.get(name(bucket, id)) ?? 0;
    },
    restore(onDay, bucket, id) {
      if (onDay !== roll()) return;
      counts.set(name(bucket, id), (counts.get(name(bucket, id)) ?? 0) + 1);
    },
  };
}
