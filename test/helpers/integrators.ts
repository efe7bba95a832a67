/**
 * Integrators and their keys, made with the operator's operations: straight on the store of a DATA_DIR whose server
 * is not running (tests that start the server in a child process, benchmarks), or through a running service.
 */
import { join } from 'node:path';
import type { Hosted } from '../../api/hosted.ts';
import { bandOf } from '../../core/hosted.ts';
import { formatServiceKey, hashSecret, newServiceKey } from '../../core/service-key.ts';
import { openIntegratorStore } from '../../io/integrators/duckdb.ts';
import { applyOp, parseOp } from '../../io/integrators/ops.ts';
import { issuedKey, runCli } from './cli.ts';
import { waitFor } from './wait.ts';

/** Creates integrator `id` with `keys` active keys on a stopped server's DATA_DIR; returns the keys' text. */
export async function seedIntegrator(
  dataDir: string,
  id: string,
  options: { keys: number; creditLimitAtomic: string },
): Promise<string[]> {
  const store = await openIntegratorStore(join(dataDir, 'integrators.duckdb'));
  try {
    const apply = (op: unknown) => applyOp(store, parseOp(op), async () => null);
    return await makeIntegrator(apply, id, options.creditLimitAtomic, options.keys);
  } finally {
    await store.close();
  }
}

/**
 * Creates integrator `id` with `keys` active keys on a running service, through the operator's operations as the
 * CLI hands them over (`hosted.apply`); returns the keys' text.
 */
export function createIntegrator(
  hosted: Hosted,
  id: string,
  creditLimitAtomic: string,
  keys = 1,
): Promise<string[]> {
  return makeIntegrator((op) => hosted.apply(JSON.stringify(op)), id, creditLimitAtomic, keys);
}

/**
 * Creates integrator `id` and one key with the operator CLI on PostgreSQL (`DATABASE_URL`), as docs/deploy.md says;
 * resolves with the key once every instance at `bases` takes it (they hear of it through the database).
 */
export async function integratorOnDatabase(
  dataDir: string,
  databaseUrl: string,
  id: string,
  creditLimitUsd: string,
  bases: string[],
): Promise<string> {
  const cli = (args: string[]) => runCli('integrators-cli.ts', args, dataDir, { DATABASE_URL: databaseUrl });
  const created = await cli([
    'create',
    '--name',
    `Router ${id}`,
    '--credit-limit',
    creditLimitUsd,
    '--id',
    id,
  ]);
  if (created.code !== 0 || created.stderr !== '') throw new Error(`integrators create: ${created.stderr}`);
  const key = issuedKey(await cli(['keys:issue', id]));
  if (key === '') throw new Error('integrators keys:issue printed no key');
  for (const base of bases) {
    await waitFor(
      async () => {
        const me = await fetch(`${base}/v1/integrators/me`, { headers: { 'x-service-key': key } });
        await me.body?.cancel();
        return me.status === 200;
      },
      { what: `${base} to take the new key`, intervalMs: 100 },
    );
  }
  return key;
}

/** The operations of a new integrator and its keys, each handed to `apply`; returns the keys' text. */
async function makeIntegrator(
  apply: (op: Record<string, unknown>) => Promise<unknown>,
  id: string,
  creditLimitAtomic: string,
  keys: number,
): Promise<string[]> {
  const at = new Date().toISOString();
  await apply({ op: 'create', id, name: `Integrator ${id}`, credit_limit_atomic: creditLimitAtomic, at });
  const made: string[] = [];
  for (let i = 0; i < keys; i++) {
    const key = newServiceKey((n) => crypto.getRandomValues(new Uint8Array(n)));
    const secret_hash = hashSecret(key.secret);
    await apply({ op: 'issue', integrator: id, key_id: key.id, secret_hash, label: `k${i}`, at });
    made.push(formatServiceKey(key));
  }
  return made;
}

/** Journals `calls` hosted checks of `integrator` in `month` as the check route journals them (and counts them). */
export async function recordHostedCalls(
  hosted: Hosted,
  integrator: string,
  month: string,
  calls: number,
): Promise<void> {
  await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      await hosted.meter.restore(month, integrator, 1, []);
      const use = { integrator, month, n: i + 1, ...bandOf(i + 1), endUser: null, release: () => {} };
      return hosted.record(use, 'k');
    }),
  );
}

/** The calendar month (UTC) before `now`, YYYY-MM. */
export function previousMonth(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)).toISOString().slice(0, 7);
}
