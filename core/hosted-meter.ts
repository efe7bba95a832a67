/**
 * Hosted usage per integrator and UTC month (spec §2.5, §8). Like the free quota (`core/quota.ts`), a use is
 * reserved synchronously, before any await, so concurrent calls get consecutive call numbers and exact bands; a
 * use is released when no answer was given. The durable record of each use is the journal (`io/hosted-usage.ts`),
 * replayed into {@link HostedMeter.restore} at start-up.
 */
import { amountDue, type Band, bandOf, utcMonth } from './hosted.ts';

/** A reserved hosted use: what the answer's `hosted` block shows and what the journal records. */
export type HostedUse = {
  integrator: string;
  month: string;
  /** The call's number in the integrator's month, 1-based. */
  n: number;
  band: Band;
  priceAtomic: bigint;
  endUser: string | null;
  release(): void;
};

export type HostedRefusal = { reason: 'credit_limit'; dueAtomic: bigint; creditLimitAtomic: bigint };

export type HostedMeter = {
  /**
   * Takes the integrator's next call of the month, unless its price would carry the month's amount due past the
   * credit limit. `endUser` is the salted hash of `x-service-end-user`, or null.
   */
  reserve(
    integrator: string,
    creditLimitAtomic: bigint,
    endUser: string | null,
  ): { ok: true; use: HostedUse } | ({ ok: false } & HostedRefusal);
  /** Calls of the integrator in `month` so far. */
  calls(integrator: string, month: string): number;
  /** Distinct end users of the integrator in `month` so far. */
  endUsers(integrator: string, month: string): number;
  /** The months in which the integrator has calls, oldest first. */
  months(integrator: string): string[];
  /** Replays `count` committed uses (start-up). */
  restore(month: string, integrator: string, count: number, endUsers: Iterable<string>): void;
};

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
      let released = false;
      return {
        ok: true,
        use: {
          integrator,
          month,
          n,
          ...bandOf(n),
          endUser,
          release() {
            if (released) return;
            released = true;
            counts.set(slot, Math.max(0, (counts.get(slot) ?? 0) - 1));
            if (endUser !== null) addUser(slot, endUser, -1);
          },
        },
      };
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
