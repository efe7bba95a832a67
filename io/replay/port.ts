/**
 * The seller's replay guard's port: what the seller asks of it. Two backends: in memory, one process, forgetting on
 * restart (`memory.ts`); and in PostgreSQL, shared by every instance, where a claim is one conditional insert
 * (`postgres.ts`, `DATABASE_URL`). Both pass `test/integration/io/replay.contract.test.ts`. Why a claim is refused
 * and how long a key is held are pure and stay in `core/replay.ts`.
 */
import type { ReplayHold, ReplayRefusal } from '../../core/replay.ts';

/** Claims of payment keys (EIP-3009 `from` + `nonce`) in flight or held after their flow. */
export type ReplayGuard = {
  /** Marks `key` in flight, or says why it may not be used now; exactly one of concurrent claims wins. `hold` is
   *  how long a shared guard keeps the claim if this instance dies mid-flight (its settlement may have gone out). */
  claim(key: string, hold: ReplayHold): Promise<ReplayRefusal | null>;
  /** Ends the flight of `key`; with `hold`, refuses it until `hold.validBefore` (or the fallback window). */
  release(key: string, hold: (ReplayHold & { reason: ReplayRefusal }) | null): Promise<void>;
};
