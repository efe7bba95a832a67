/**
 * The payment replay guard shared by every instance (`DATABASE_URL`): the port of `port.ts` over
 * the `payment_claims` table, one row per payment key (EIP-3009 `from` + `nonce`) with why it is refused and until
 * when (epoch seconds of the injected clock).
 *
 * A claim is one statement: an insert that, on an existing key, takes it over only when its hold has ended. Of
 * concurrent claims on any instances exactly one gets the row back. An in-flight claim is held for the payment's
 * own window, so an instance killed mid-flight (its settlement may have gone out) leaves the payload refused until
 * it expires, as a settlement of unknown outcome is.
 */
import type { Sql } from 'postgres';
import { holdUntil, type ReplayRefusal } from '../../core/replay.ts';
import { boundedPort } from '../postgres/wait.ts';
import type { ReplayGuard } from './port.ts';

const REFUSALS: readonly ReplayRefusal[] = [
  'payment_in_flight',
  'payment_already_used',
  'settlement_pending',
];

/**
 * The shared guard over `sql` (its schema made by `io/postgres/schema.ts`); `waitMs` bounds each claim and release
 * (`io/postgres/wait.ts`, 10 s unless set).
 */
export async function openPostgresReplayGuard(
  sql: Sql,
  now: () => Date,
  waitMs?: number,
): Promise<ReplayGuard> {
  const seconds = () => Math.floor(now().getTime() / 1000);
  await sql`DELETE FROM payment_claims WHERE until_epoch <= ${seconds()}`;

  const guard: ReplayGuard = {
    async claim(key, hold) {
      const at = seconds();
      const until = Math.max(holdUntil(at, hold), at + 1);
      const [won] = await sql`INSERT INTO payment_claims (key, reason, until_epoch)
        VALUES (${key}, 'payment_in_flight', ${until})
        ON CONFLICT (key) DO UPDATE SET reason = excluded.reason, until_epoch = excluded.until_epoch
          WHERE payment_claims.until_epoch <= ${at}
        RETURNING key`;
      if (won) return null;
      const [held] = await sql<
        Array<{ reason: string }>
      >`SELECT reason FROM payment_claims WHERE key = ${key}`;
      // A row released between the two statements: refused as in flight, and the payer may simply retry.
      return REFUSALS.find((reason) => reason === held?.reason) ?? 'payment_in_flight';
    },
    async release(key, hold) {
      const at = seconds();
      const until = hold ? holdUntil(at, hold) : at;
      if (!hold || until <= at) {
        await sql`DELETE FROM payment_claims WHERE key = ${key} AND reason = 'payment_in_flight'`;
        return;
      }
      await sql`UPDATE payment_claims SET reason = ${hold.reason}, until_epoch = ${until} WHERE key = ${key}`;
    },
  };
  return boundedPort(guard, ['claim', 'release'], waitMs);
}
