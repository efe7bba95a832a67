/**
 * Hosted mode's counters shared by every instance (`DATABASE_URL`): the monthly usage meter (bands and the
 * credit limit, docs/api.md §8) and the per-key rate limit (120 a minute), over the tables of `io/postgres/schema.ts`.
 *
 * Each decision is one transaction that locks the one row it depends on (the integrator's month, the key's window),
 * so concurrent calls on any instance queue behind each other and the counts are exact across instances. A use is
 * durable once its transaction commits, before the answer is produced; a use whose answer fails is given back. An
 * instance killed between the two leaves the use counted (docs/decisions.md "Shared state on PostgreSQL").
 */
import type { Sql } from 'postgres';
import { amountDue, utcMonth } from '../../core/hosted.ts';
import { grantedUse, type HostedReservation, type MeterPort } from '../../core/hosted-meter.ts';
import { decideRate, type RatePort } from '../../core/rate-limit.ts';
import { waitFor } from '../postgres/wait.ts';

/** Thrown inside the reservation to roll it back: the call would carry the month past the credit limit. */
class OverLimit extends Error {
  readonly n: number;
  constructor(n: number) {
    super('credit limit');
    this.n = n;
  }
}

/** The shared usage meter over `sql`; `now` is the injected clock. */
export function postgresMeter(sql: Sql, now: () => Date): MeterPort {
  const giveBack = (integrator: string, month: string, endUser: string | null) =>
    waitFor(
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
        n = await waitFor(
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
      const [row] = await waitFor(sql<Array<{ calls: string }>>`SELECT calls FROM hosted_usage
        WHERE integrator = ${integrator} AND month = ${month}`);
      return Number(row?.calls ?? 0);
    },
    async endUsers(integrator, month) {
      const [row] = await waitFor(sql<Array<{ n: number }>>`SELECT count(*)::int AS n FROM hosted_end_users
        WHERE integrator = ${integrator} AND month = ${month}`);
      return row?.n ?? 0;
    },
    async months(integrator) {
      const rows = await waitFor(sql<Array<{ month: string }>>`SELECT month FROM hosted_usage
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

/** The shared sliding-window rate limit over `sql` (`core/rate-limit.ts` decides); `now` is epoch milliseconds. */
export function postgresRateLimiter(
  sql: Sql,
  options: { limit: number; windowSeconds: number; now: () => number },
): RatePort {
  return {
    take: (key) =>
      waitFor(
        sql.begin(async (tx) => {
          await tx`INSERT INTO hosted_rate (key, times) VALUES (${key}, '{}') ON CONFLICT (key) DO NOTHING`;
          const [row] = await tx<Array<{ times: string[] }>>`SELECT times FROM hosted_rate
          WHERE key = ${key} FOR UPDATE`;
          const { times, ...decision } = decideRate((row?.times ?? []).map(Number), options.now(), options);
          await tx`UPDATE hosted_rate SET times = ${tx.array(times.map(String))}::bigint[] WHERE key = ${key}`;
          return decision;
        }),
      ),
  };
}
