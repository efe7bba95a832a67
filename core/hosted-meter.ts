/**
 * What a hosted use is (docs/api.md §2.5, §8): the integrator's call number in its UTC month, its band and price,
 * or why the call is refused. The counters are state, behind the port of `io/hosted-meter/port.ts` (in memory, or
 * shared in PostgreSQL); both grant a use through {@link grantedUse}.
 */
import { type Band, bandOf } from './hosted.ts';

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

/** A reservation: the use, or why the call is refused. */
export type HostedReservation = { ok: true; use: HostedUse } | ({ ok: false } & HostedRefusal);

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
