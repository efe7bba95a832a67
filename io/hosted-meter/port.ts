/**
 * The hosted usage meter's port (docs/api.md §2.5, §8): what hosted calls reserve from and the integrator route
 * reads. Two backends: in memory, one process, restored from the snapshot and the journal at start-up
 * (`memory.ts`, `usage.ts`); and in PostgreSQL, shared by every instance, deciding in one database transaction
 * (`postgres.ts`, `DATABASE_URL`). Both pass `test/integration/io/hosted-meter.contract.test.ts`. What a use is
 * (`HostedUse`, bands, prices) is pure and stays in `core/hosted-meter.ts` and `core/hosted.ts`.
 */
import type { HostedReservation } from '../../core/hosted-meter.ts';

/** Counts hosted calls per integrator and UTC month, with their distinct end users. */
export type MeterPort = {
  /**
   * Takes the integrator's next call of the month, unless its price would carry the month's amount due past the
   * credit limit. `endUser` is the salted hash of `x-service-end-user`, or null.
   */
  reserve(integrator: string, creditLimitAtomic: bigint, endUser: string | null): Promise<HostedReservation>;
  /** Calls of the integrator in `month` so far. */
  calls(integrator: string, month: string): Promise<number>;
  /** Distinct end users of the integrator in `month` so far. */
  endUsers(integrator: string, month: string): Promise<number>;
  /** The months in which the integrator has calls, oldest first. */
  months(integrator: string): Promise<string[]>;
  /** Adds `count` committed uses (start-up in memory; a test's head start on any meter). */
  restore(month: string, integrator: string, count: number, endUsers: Iterable<string>): void | Promise<void>;
};
