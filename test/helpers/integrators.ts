/**
 * An integrator and its keys, made with the operator's operations straight on the store of a DATA_DIR whose server
 * is not running (tests that start the server in a child process, benchmarks).
 */
import { join } from 'node:path';
import { formatServiceKey, hashSecret, newServiceKey } from '../../core/service-key.ts';
import { applyOp, parseOp } from '../../io/integrator-ops.ts';
import { openIntegratorStore } from '../../io/integrator-store.ts';

/** Creates integrator `id` with `keys` active keys; returns the keys' text. */
export async function seedIntegrator(
  dataDir: string,
  id: string,
  options: { keys: number; creditLimitAtomic: string },
): Promise<string[]> {
  const store = await openIntegratorStore(join(dataDir, 'integrators.duckdb'));
  const at = new Date().toISOString();
  const apply = (op: unknown) => applyOp(store, parseOp(op), async () => null);
  try {
    await apply({
      op: 'create',
      id,
      name: `Integrator ${id}`,
      credit_limit_atomic: options.creditLimitAtomic,
      at,
    });
    const keys: string[] = [];
    for (let i = 0; i < options.keys; i++) {
      const key = newServiceKey((n) => crypto.getRandomValues(new Uint8Array(n)));
      await apply({
        op: 'issue',
        integrator: id,
        key_id: key.id,
        secret_hash: hashSecret(key.secret),
        label: `k${i}`,
        at,
      });
      keys.push(formatServiceKey(key));
    }
    return keys;
  } finally {
    await store.close();
  }
}
