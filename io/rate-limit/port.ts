/**
 * The hosted rate limit's port (docs/api.md §8: 120 checks per minute per key): what hosted calls take a unit from.
 * Two backends: in memory, one process (`memory.ts`); and in PostgreSQL, the window every instance shares
 * (`postgres.ts`, `DATABASE_URL`). Both decide with `decideRate` (`core/rate-limit.ts`) and pass
 * `test/integration/io/rate-limit.contract.test.ts`.
 */
import type { RateDecision } from '../../core/rate-limit.ts';

/** A sliding window of allowed calls per key. */
export type RatePort = {
  /** Counts one call of `key` now when allowed; a refused call is not counted. */
  take(key: string): Promise<RateDecision>;
};
