/**
 * The free quota's port (docs/api.md §8, §5.6): what the access gate reserves free uses from. Two backends: in
 * memory, one process, restored from the journal at start-up (`memory.ts`); and in PostgreSQL, shared by every
 * instance, deciding in one database transaction (`postgres.ts`, `DATABASE_URL`). Both pass
 * `test/integration/io/quota.contract.test.ts`. What a reservation is (`QuotaKey`, `ReserveResult`) and the UTC day
 * it counts in are pure and stay in `core/quota.ts`.
 */
import type { QuotaKey, ReserveResult } from '../../core/quota.ts';

/** Takes one unit of every key or none, deciding before the caller's first await on one process. */
export type QuotaPort = {
  /** Takes one unit of every key, or none: `exhausted` names the first key at its limit. */
  reserve(keys: QuotaKey[]): Promise<ReserveResult>;
};
