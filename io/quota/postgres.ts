/**
 * The free-tier quota shared by every instance (`DATABASE_URL`): the port of `port.ts` over the
 * `quota_use` table, one row per (UTC day, bucket, client) counter.
 *
 * A reservation is one transaction: each key, in (bucket, id) order so two reservations never wait on each other
 * in a cycle, is incremented by a conditional upsert that only succeeds below its limit; the first key at its
 * limit rolls the whole transaction back. Row locks make concurrent reservations on any instance queue behind
 * each other, so the count is exact across instances. A use is durable once its transaction commits: there is no
 * journal replay, and an instance killed between a reservation and its answer leaves
 * the unit spent (never an extra free answer: docs/decisions.md "Shared state on PostgreSQL").
 */
import type { Sql } from 'postgres';
import { type QuotaKey, type ReserveResult, utcDay } from '../../core/quota.ts';
import { waitFor } from '../postgres/wait.ts';
import type { QuotaPort } from './port.ts';

/** Thrown inside the transaction to roll it back: `key` was at its limit with `used` units. */
class Exhausted extends Error {
  readonly key: QuotaKey;
  readonly used: number;
  constructor(key: QuotaKey, used: number) {
    super('quota exhausted');
    this.key = key;
    this.used = used;
  }
}

/**
 * The shared quota over `sql` (its schema made by `io/postgres/schema.ts`); `now` is the injected clock.
 * `saltCheck` is a value derived from this instance's quota salt (never the salt): the first instance records it,
 * and an instance whose salt differs refuses to start, since it would count each client under other names.
 * `waitMs` bounds each wait on the database (`io/postgres/wait.ts`, 10 s unless set).
 */
export async function openPostgresQuota(
  sql: Sql,
  now: () => Date,
  saltCheck: string,
  waitMs?: number,
): Promise<QuotaPort> {
  const wait = <T>(work: PromiseLike<T>) => waitFor(work, waitMs);
  await sql`INSERT INTO installation (name, value) VALUES ('quota-salt', ${saltCheck}) ON CONFLICT (name) DO NOTHING`;
  const [recorded] = await sql<
    Array<{ value: string }>
  >`SELECT value FROM installation WHERE name = 'quota-salt'`;
  if (recorded?.value !== saltCheck) {
    throw new Error(
      'DATA_DIR/keys/quota-salt differs from the one the other instances on this database use: copy the same keys folder to every instance (docs/deploy.md)',
    );
  }
  // Counters of past days are never read again.
  await sql`DELETE FROM quota_use WHERE day < ${utcDay(now())}`;
  const byName = (keys: QuotaKey[]) =>
    [...keys].sort((a, b) => (a.bucket === b.bucket ? cmp(a.id, b.id) : cmp(a.bucket, b.bucket)));

  return {
    async reserve(keys): Promise<ReserveResult> {
      const day = utcDay(now());
      let counts: Map<QuotaKey, number>;
      try {
        counts = await wait(
          sql.begin(async (tx) => {
            const taken = new Map<QuotaKey, number>();
            for (const key of byName(keys)) {
              const [row] = await tx<Array<{ used: number }>>`
              INSERT INTO quota_use (day, bucket, id, used) VALUES (${day}, ${key.bucket}, ${key.id}, 1)
              ON CONFLICT (day, bucket, id) DO UPDATE SET used = quota_use.used + 1
                WHERE quota_use.used < ${key.limit}
              RETURNING used`;
              if (!row || row.used > key.limit) {
                const [current] = await tx<Array<{ used: number }>>`SELECT used FROM quota_use
                WHERE day = ${day} AND bucket = ${key.bucket} AND id = ${key.id}`;
                throw new Exhausted(key, Math.min(current?.used ?? 0, key.limit));
              }
              taken.set(key, row.used);
            }
            return taken;
          }),
        );
      } catch (error) {
        if (error instanceof Exhausted) return { ok: false, exhausted: error.key, used: error.used };
        throw error;
      }
      let released = false;
      const first = keys[0];
      return {
        ok: true,
        reservation: {
          day,
          keys,
          used: first ? (counts.get(first) ?? 0) : 0,
          async release() {
            if (released) return;
            released = true;
            await wait(
              sql.begin(async (tx) => {
                for (const key of byName(keys)) {
                  await tx`UPDATE quota_use SET used = greatest(used - 1, 0)
                    WHERE day = ${day} AND bucket = ${key.bucket} AND id = ${key.id}`;
                }
              }),
            );
          },
        },
      };
    },
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
