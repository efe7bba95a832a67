/**
 * The hosted usage meter of one process (`port.ts`). Like the free quota (`io/quota/memory.ts`), a use is reserved
 * synchronously, before any await, so concurrent calls get consecutive call numbers and exact bands; a use is
 * released when no answer was given. The durable record of each use is the journal (`usage.ts`), replayed into
 * {@link HostedMeter.restore} at start-up.
 */
import { amountDue, utcMonth } from '../../core/hosted.ts';
import { grantedUse, type HostedReservation } from '../../core/hosted-meter.ts';
import type { MeterPort } from './port.ts';

/** The in-memory meter: the port's decisions taken synchronously. */
export type HostedMeter = {
  /**
   * Takes the integrator's next call of the month, unless its price would carry the month's amount due past the
   * credit limit. `endUser` is the salted hash of `x-service-end-user`, or null.
   */
  reserve(integrator: string, creditLimitAtomic: bigint, endUser: string | null): HostedReservation;
  /** Calls of the integrator in `month` so far. */
  calls(integrator: string, month: string): number;
  /** Distinct end users of the integrator in `month` so far. */
  endUsers(integrator: string, month: string): number;
  /** The months in which the integrator has calls, oldest first. */
  months(integrator: string): string[];
  /** Replays `count` committed uses (start-up). */
  restore(month: string, integrator: string, count: number, endUsers: Iterable<string>): void;
};

/** The port over the in-memory meter: the decision is still taken at the call, before the caller's first await. */
export function meterPort(meter: HostedMeter): MeterPort {
  return {
    reserve: (integrator, limit, endUser) => Promise.resolve(meter.reserve(integrator, limit, endUser)),
    calls: (integrator, month) => Promise.resolve(meter.calls(integrator, month)),
    endUsers: (integrator, month) => Promise.resolve(meter.endUsers(integrator, month)),
    months: (integrator) => Promise.resolve(meter.months(integrator)),
    restore: (month, integrator, count, endUsers) => meter.restore(month, integrator, count, endUsers),
  };
}

/** Creates the in-memory meter. */
export function createHostedMeter(options: { now: () => Date }): HostedMeter {
  const counts = new Map<string, number>();
  const users = new Map<string, Map<string, number>>();
  const name = (integrator: string, month: string) => `${month}\u0000${integrator}`;
  const addUser = (slot: string, hash: string, delta: number) => {
    const seen = users.get(slot) ?? new Map<string, number>();
    const next = (seen.get(hash) ?? 0) + delta;
    if (next > 0) seen.set(hash, next);
    else seen.delete(hash);
    users.set(slot, seen);
  };

  return {
    reserve(integrator, creditLimitAtomic, endUser) {
      const month = utcMonth(options.now());
      const slot = name(integrator, month);
      const n = (counts.get(slot) ?? 0) + 1;
      const dueAtomic = amountDue(n);
      if (dueAtomic > creditLimitAtomic) {
        return { ok: false, reason: 'credit_limit', dueAtomic: amountDue(n - 1), creditLimitAtomic };
      }
      counts.set(slot, n);
      if (endUser !== null) addUser(slot, endUser, 1);
      return grantedUse({ integrator, month, n, endUser }, () => {
        counts.set(slot, Math.max(0, (counts.get(slot) ?? 0) - 1));
        if (endUser !== null) addUser(slot, endUser, -1);
      });
    },
    calls: (integrator, month) => counts.get(name(integrator, month)) ?? 0,
    endUsers: (integrator, month) => users.get(name(integrator, month))?.size ?? 0,
    months: (integrator) =>
      [...counts.keys()]
        .map((slot) => slot.split('\u0000'))
        .filter(([, owner]) => owner === integrator)
        .map(([month]) => month ?? '')
        .sort(),
    restore(month, integrator, count, endUsers) {
      const slot = name(integrator, month);
      counts.set(slot, (counts.get(slot) ?? 0) + count);
      for (const hash of endUsers) addUser(slot, hash, 1);
    },
  };
}
