/**
 * The hosted rate limit shared by every instance (`DATABASE_URL`): the sliding window of `port.ts` over the
 * `hosted_rate` table of `io/postgres/schema.ts`, one row of allowed call times per key.
 *
 * Each decision is one transaction that locks the key's row, so concurrent calls on any instance queue behind each
 * other and the window is exact across instances (docs/decisions.md "Shared state on PostgreSQL").
 */
import type { Sql } from 'postgres';
import { decideRate } from '../../core/rate-limit.ts';
import { waitFor } from '../postgres/wait.ts';
import type { RatePort } from './port.ts';

/**
 * The shared sliding-window rate limit over `sql` (`core/rate-limit.ts` decides); `now` is epoch milliseconds;
 * `waitMs` bounds each wait on the database (`io/postgres/wait.ts`, 10 s unless set).
 */
export function postgresRateLimiter(
  sql: Sql,
  options: { limit: number; windowSeconds: number; now: () => number; waitMs?: number },
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
        options.waitMs,
      ),
  };
}
