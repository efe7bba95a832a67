/** The integrator and key rows as both stores read them back (`duckdb.ts`, `postgres.ts`). */
import type { IntegratorRow, KeyRow, KeyState } from './port.ts';

/** An integrator from its row (either store's). */
export function integratorOf(r: Record<string, unknown>): IntegratorRow {
  return {
    id: String(r.id),
    name: String(r.name),
    creditLimitAtomic: BigInt(String(r.credit_limit_atomic)),
    createdAt: String(r.created_at),
  };
}

/** A key from its row (either store's). */
export function keyOf(r: Record<string, unknown>): KeyRow {
  return {
    id: String(r.id),
    integrator: String(r.integrator),
    secretHash: String(r.secret_hash),
    label: String(r.label),
    state: String(r.state) as KeyState,
    createdAt: String(r.created_at),
    changedAt: String(r.changed_at),
  };
}
