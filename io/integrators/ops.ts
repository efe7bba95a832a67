/**
 * The operator's hosted-mode operations (`npm run integrators`, `npm run invoices`), as data: the CLI applies one
 * straight to the integrator store when no server runs, or hands it to the running server through the inbox (the
 * server applies it with the same {@link applyOp}). A key's secret never travels: the CLI draws the key, prints it
 * once, and sends only the hash of its secret.
 */
import * as v from 'valibot';
import { isMonth } from '../../core/hosted.ts';
import type { IntegratorStore, KeyState } from './port.ts';

const Id = v.pipe(v.string(), v.regex(/^[a-z0-9]{2,32}$/, 'an id of 2 to 32 lower-case letters and digits'));
const KeyId = v.pipe(v.string(), v.regex(/^[a-z0-9]{12}$/));
const At = v.pipe(v.string(), v.isoTimestamp());
const Label = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(64),
  v.regex(/^[\x20-\x7e]+$/, 'printable ASCII'),
);

const Op = v.variant('op', [
  v.object({
    op: v.literal('create'),
    id: Id,
    name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
    credit_limit_atomic: v.pipe(v.string(), v.regex(/^(?:0|[1-9]\d{0,17})$/)),
    at: At,
  }),
  v.object({
    op: v.literal('issue'),
    integrator: Id,
    key_id: KeyId,
    secret_hash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
    label: Label,
    at: At,
  }),
  v.object({
    op: v.literal('state'),
    target: v.union([Id, KeyId]),
    state: v.picklist(['active', 'suspended', 'revoked']),
    at: At,
  }),
  v.object({ op: v.literal('list') }),
  v.object({ op: v.literal('invoices'), month: v.custom<string>(isMonth, 'a month YYYY-MM') }),
  v.object({ op: v.literal('overpayments') }),
]);

export type IntegratorOp = v.InferOutput<typeof Op>;

/** Parses an operation (from the CLI or an inbox file); a bad one is an `Error` naming the problem. */
export function parseOp(value: unknown): IntegratorOp {
  const parsed = v.safeParse(Op, value);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const at = issue.path?.map((item) => String(item.key)).join('.') ?? 'operation';
    throw new Error(`bad operation (${at}): ${issue.message}`);
  }
  return parsed.output;
}

/** Applies an operation; returns what the operator is shown. `invoices` is the caller's (it needs the signer). */
export async function applyOp(
  store: IntegratorStore,
  op: IntegratorOp,
  invoices: (month: string) => Promise<unknown>,
): Promise<unknown> {
  switch (op.op) {
    case 'create': {
      if ((await store.integrators()).some((row) => row.id === op.id))
        throw new Error(`integrator ${op.id} exists`);
      // `suspend`, `resume` and `revoke` take either kind of id: one name must never mean both.
      if ((await store.keys()).some((row) => row.id === op.id))
        throw new Error(`${op.id} is already a key id; choose another --id for the integrator`);
      await store.createIntegrator({
        id: op.id,
        name: op.name,
        creditLimitAtomic: BigInt(op.credit_limit_atomic),
        createdAt: op.at,
      });
      return { created: op.id, credit_limit_atomic: op.credit_limit_atomic };
    }
    case 'issue': {
      if (!(await store.integrators()).some((row) => row.id === op.integrator))
        throw new Error(`no integrator ${op.integrator}`);
      if ((await store.keys()).some((row) => row.id === op.key_id))
        throw new Error(`key ${op.key_id} exists`);
      if ((await store.integrators()).some((row) => row.id === op.key_id))
        throw new Error(`key id ${op.key_id} is an integrator id; nothing was issued, run keys:issue again`);
      await store.addKey({
        id: op.key_id,
        integrator: op.integrator,
        secretHash: op.secret_hash,
        label: op.label,
        state: 'active',
        createdAt: op.at,
        changedAt: op.at,
      });
      return { issued: op.key_id, integrator: op.integrator, label: op.label };
    }
    case 'state':
      return { changed: await changeState(store, op.target, op.state, op.at), state: op.state };
    case 'list':
      return listAll(store);
    case 'invoices':
      return invoices(op.month);
    case 'overpayments':
      return (await store.overpayments({})).map((row) => ({
        invoice: row.invoice,
        integrator: row.integrator,
        tx: row.tx,
        payer: row.payer,
        amount_atomic: row.amountAtomic,
        at: row.at,
      }));
  }
}

/** A key id, or an integrator id for all of its keys. Revoked is final; resume applies to suspended keys only. */
async function changeState(store: IntegratorStore, target: string, state: KeyState, at: string) {
  const keys = (await store.keys()).filter((key) => key.id === target || key.integrator === target);
  if (keys.length === 0) throw new Error(`no key or integrator with keys named ${target}`);
  const changed: string[] = [];
  for (const key of keys) {
    if (key.state === 'revoked' || key.state === state) continue;
    if (state === 'active' && key.state !== 'suspended') continue;
    await store.setKeyState(key.id, state, at);
    changed.push(key.id);
  }
  return changed;
}

async function listAll(store: IntegratorStore) {
  const keys = await store.keys();
  return (await store.integrators()).map((row) => ({
    id: row.id,
    name: row.name,
    credit_limit_atomic: row.creditLimitAtomic.toString(),
    created_at: row.createdAt,
    keys: keys
      .filter((key) => key.integrator === row.id)
      .map((key) => ({ id: key.id, label: key.label, state: key.state, created_at: key.createdAt })),
  }));
}
