/**
 * Hosted usage shared by every instance (`DATABASE_URL`): the monthly usage meter of `port.ts` (bands and the
 * credit limit, docs/api.md §8) over the `hosted_usage` and `hosted_end_users` tables of `io/postgres/schema.ts`.
 *
 * Each reservation is one transaction that locks the one row it depends on (the integrator's month), so concurrent
 * calls on any instance queue behind each other and the counts are exact across instances. A use is
 * durable once its transaction commits, before the answer is produced; a use whose answer fails is given back. An
 * instance killed between the two leaves the use counted (docs/decisions.md "Shared state on PostgreSQL").
 */
import type { Sql } from 'postgres';
import { amountDue, utcMonth } from '../../core/hosted.ts';
import { grantedUse, type HostedReservation } from '../../core/hosted-meter.ts';
import { waitFor } from '../postgres/wait.ts';
import type { MeterPort } from './port.ts';

/** Thrown inside the reservation to roll it back: the call would carry the month past the credit limit. */
class OverLimit extends Error {
  readonly n: number;
  constructor(n: number) {
    super('credit limit');
    this.n = n;
  }
}

/**
 * The shared usage meter over `sql`; `now` is the injected clock; `waitMs` bounds each wait on the database
 * (`io/postgres/wait.ts`, 10 s unless set).
 */
export function postgresMeter(sql: Sql, now: () => Date, waitMs?: number): MeterPort {
  const wait = <T>(work: PromiseLike<T>) => waitFor(work, waitMs);
  const giveBack = (integrator: string, month: string, endUser: string | null) =>
    wait(
      sql.begin(async (tx) => {
        await tx`UPDATE hosted_usage SET calls = greatest(calls - 1, 0)
        WHERE integrator = ${integrator} AND month = ${month}`;
        if (endUser === null) return;
        await tx`UPDATE hosted_end_users SET calls = calls - 1
        WHERE integrator = ${integrator} AND month = ${month} AND end_user = ${endUser}`;
        await tx`DELETE FROM hosted_end_users
        WHERE integrator = ${integrator} AND month = ${month} AND end_user = ${endUser} AND calls <= 0`;
      }),
    );

  return {
    async reserve(integrator, creditLimitAtomic, endUser): Promise<HostedReservation> {
      const month = utcMonth(now());
      let n: number;
      try {
        n = await wait(
          sql.begin(async (tx) => {
            const [row] = await tx<Array<{ calls: string }>>`
            INSERT INTO hosted_usage (integrator, month, calls) VALUES (${integrator}, ${month}, 1)
            ON CONFLICT (integrator, month) DO UPDATE SET calls = hosted_usage.calls + 1 RETURNING calls`;
            const taken = Number(row?.calls ?? 0);
            if (amountDue(taken) > creditLimitAtomic) throw new OverLimit(taken);
            if (endUser !== null) {
              await tx`INSERT INTO hosted_end_users (integrator, month, end_user, calls)
              VALUES (${integrator}, ${month}, ${endUser}, 1)
              ON CONFLICT (integrator, month, end_user) DO UPDATE SET calls = hosted_end_users.calls + 1`;
            }
            return taken;
          }),
        );
      } catch (error) {
        if (!(error instanceof OverLimit)) throw error;
        return { ok: false, reason: 'credit_limit', dueAtomic: amountDue(error.n - 1), creditLimitAtomic };
      }
      return grantedUse({ integrator, month, n, endUser }, () => giveBack(integrator, month, endUser));
    },
    async calls(integrator, month) {
      const [row] = await wait(sql<Array<{ calls: string }>>`SELECT calls FROM hosted_usage
        WHERE integrator = ${integrator} AND month = ${month}`);
      return Number(row?.calls ?? 0);
    },
    async endUsers(integrator, month) {
      const [row] = await wait(sql<Array<{ n: number }>>`SELECT count(*)::int AS n FROM hosted_end_users
        WHERE integrator = ${integrator} AND month = ${month}`);
      return row?.n ?? 0;
    },
    async months(integrator) {
      const rows = await wait(sql<Array<{ month: string }>>`SELECT month FROM hosted_usage
        WHERE integrator = ${integrator} AND calls > 0 ORDER BY month`);
      return rows.map((row) => row.month);
    },
    async restore(month, integrator, count, endUsers) {
      await sql.begin(async (tx) => {
        await tx`INSERT INTO hosted_usage (integrator, month, calls) VALUES (${integrator}, ${month}, ${count})
          ON CONFLICT (integrator, month) DO UPDATE SET calls = hosted_usage.calls + ${count}`;
        for (const endUser of endUsers) {
          await tx`INSERT INTO hosted_end_users (integrator, month, end_user, calls)
            VALUES (${integrator}, ${month}, ${endUser}, 1)
            ON CONFLICT (integrator, month, end_user) DO UPDATE SET calls = hosted_end_users.calls + 1`;
        }
      });
    },
  };
}
