/**
 * Hosted usage per integrator and UTC month (docs/api.md §2.5, §8). Like the free quota (`core/quota.ts`), a use is
 * reserved synchronously, before any await, so concurrent calls get consecutive call numbers and exact bands; a
 * use is released when no answer was given. The durable record of each use is the journal (`io/hosted-meter/usage.ts`),
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
  /** Gives the use back; a shared meter's release is a database write (a promise). */
  release(): void | Promise<void>;
};

export type HostedRefusal = { reason: 'credit_limit'; dueAtomic: bigint; creditLimitAtomic: bigint };

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

/** A reservation: the use, or why the call is refused. */
export type HostedReservation = { ok: true; use: HostedUse } | ({ ok: false } & HostedRefusal);

/**
 * What hosted calls reserve from and the integrator route reads: the in-memory meter of one process
 * ({@link meterPort}), or the usage every instance shares (`io/hosted-meter/postgres.ts`, `DATABASE_URL`), which decides in
 * one database transaction.
 */
export type MeterPort = {
  reserve(integrator: string, creditLimitAtomic: bigint, endUser: string | null): Promise<HostedReservation>;
  calls(integrator: string, month: string): Promise<number>;
  endUsers(integrator: string, month: string): Promise<number>;
  months(integrator: string): Promise<string[]>;
  /** Adds `count` committed uses (start-up in memory; a test's head start on any meter). */
  restore(month: string, integrator: string, count: number, endUsers: Iterable<string>): void | Promise<void>;
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

/** The granted reservation of call `n`; its release runs `giveBack` once, however often it is called. */
export function grantedUse(
  call: { integrator: string; month: string; n: number; endUser: string | null },
  giveBack: () => void | Promise<void>,
): HostedReservation {
  let released = false;
  return {
    ok: true,
    use: {
      ...call,
      ...bandOf(call.n),
      release() {
        if (released) return;
        released = true;
        return giveBack();
      },
    },
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
