/**
 * The integrator store (hosted mode, docs/api.md §5.4): integrators and their credit limits, keys (only the hash of the
 * secret) and their state, the monthly usage snapshot with the journal cursor it covers, end users by salted hash,
 * and invoices with their payment. Its own DuckDB file (`integrators.duckdb`), so an operator CLI can open it
 * when no server runs; while one runs, the CLI hands its operation over through the inbox (DuckDB is
 * single-writer). Operations run one at a time: each is one transaction.
 */
import { randomBytes } from 'node:crypto';
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { select } from '../duckdb/query.ts';
import { duckdbInvoices, INVOICE_SCHEMA, tokenizeInvoices } from './_duckdb-invoices.ts';

export type KeyState = 'active' | 'suspended' | 'revoked';
export type IntegratorRow = { id: string; name: string; creditLimitAtomic: bigint; createdAt: string };
export type KeyRow = {
  id: string;
  integrator: string;
  secretHash: string;
  label: string;
  state: KeyState;
  createdAt: string;
  changedAt: string;
};
export type UsageRow = { integrator: string; month: string; calls: number; endUsers: number };
/** `settling` while one payer's settlement is under way (the claim, {@link IntegratorStore.claimInvoice}). */
export type InvoiceStatus = 'open' | 'settling' | 'paid' | 'nothing_due';
export type InvoiceRow = {
  id: string;
  integrator: string;
  month: string;
  totalAtomic: string;
  body: Record<string, unknown>;
  /** `nothing_due` for a month inside the free allowance: there is nothing to pay. */
  status: InvoiceStatus;
  tx: string | null;
  paidAt: string | null;
  /** The random token of the invoice's pay link: without the integrator's key, the pay route needs it. */
  payToken: string;
  /** Who is settling a payment of it and until when (epoch seconds); null unless `settling`. */
  claim: { holder: string; until: number } | null;
};
/** A settlement that landed on an invoice already paid: money the operator owes back (or credits). */
export type Overpayment = {
  invoice: string;
  integrator: string;
  tx: string;
  payer: string;
  amountAtomic: string;
  at: string;
};
/** Uses folded from the journal: calls per (integrator, month) and per end-user hash. */
export type UsageDelta = {
  calls: Map<string, number>;
  endUsers: Map<string, number>;
};

export type IntegratorStore = {
  createIntegrator(row: IntegratorRow): Promise<void>;
  addKey(row: KeyRow): Promise<void>;
  setKeyState(keyId: string, state: KeyState, at: string): Promise<void>;
  integrators(): Promise<IntegratorRow[]>;
  keys(): Promise<KeyRow[]>;
  /** The journal cursor the usage snapshot covers (null: nothing folded yet). */
  usageCursor(): Promise<string | null>;
  /**
   * Adds `delta` (the journal's uses after `from`) to the snapshot and moves its cursor to `to`, in one
   * transaction; false, with nothing changed, when the cursor is no longer `from` (another fold got there first).
   */
  foldUsage(delta: UsageDelta, from: string | null, to: string): Promise<boolean>;
  usage(filter: { integrator?: string; month?: string }): Promise<UsageRow[]>;
  /** The end-user hashes of an integrator's month. */
  endUserHashes(integrator: string, month: string): Promise<string[]>;
  /** Stores an invoice unless one with its id exists; true when stored. */
  addInvoice(row: Omit<InvoiceRow, 'claim'>): Promise<boolean>;
  invoice(id: string): Promise<InvoiceRow | null>;
  invoices(integrator: string): Promise<InvoiceRow[]>;
  /**
   * Claims the invoice for one payment's settlement: open (or settling under a claim that expired by `now`) becomes
   * settling, held by `holder` until `until` (epoch seconds). True only for the one call that took it, whichever
   * instance made it; false for an invoice paid, with nothing due, unknown, or claimed by someone else.
   */
  claimInvoice(id: string, holder: string, until: number, now: number): Promise<boolean>;
  /** Gives the claim back (settling → open) if `holder` still holds it; a settlement that went nowhere. */
  releaseInvoice(id: string, holder: string): Promise<void>;
  /**
   * Marks the invoice paid by a settlement that landed; false, with nothing changed, when it is already paid (the
   * settlement is then an overpayment) or has nothing due. Normally the claimant's; a settlement that outlived its
   * claim still counts as the payment while no other has landed, so money received never leaves an invoice open.
   */
  markInvoicePaid(id: string, tx: string, at: string): Promise<boolean>;
  /** Records a settlement that landed on an invoice already paid; once per transaction. */
  addOverpayment(row: Overpayment): Promise<void>;
  overpayments(filter: { integrator?: string; invoice?: string }): Promise<Overpayment[]>;
  /** Records that the invoices of `month` were issued (kept: uses of it that arrive later are billed late). */
  markInvoiceRun(month: string, at: string): Promise<void>;
  /** The months whose invoices were issued. */
  invoiceRuns(): Promise<string[]>;
  close(): Promise<void>;
};

/** The invoice half of {@link IntegratorStore}, one module per backend (`_duckdb-invoices.ts`, `_postgres-invoices.ts`). */
export type InvoiceStore = Pick<
  IntegratorStore,
  | 'addInvoice'
  | 'invoice'
  | 'invoices'
  | 'claimInvoice'
  | 'releaseInvoice'
  | 'markInvoicePaid'
  | 'addOverpayment'
  | 'overpayments'
  | 'markInvoiceRun'
  | 'invoiceRuns'
>;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS integrators (
  id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, credit_limit_atomic VARCHAR NOT NULL, created_at VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS service_keys (
  id VARCHAR PRIMARY KEY, integrator VARCHAR NOT NULL, secret_hash VARCHAR NOT NULL, label VARCHAR NOT NULL,
  state VARCHAR NOT NULL, created_at VARCHAR NOT NULL, changed_at VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS hosted_usage (
  integrator VARCHAR NOT NULL, month VARCHAR NOT NULL, calls BIGINT NOT NULL, PRIMARY KEY (integrator, month));
CREATE TABLE IF NOT EXISTS hosted_end_users (
  integrator VARCHAR NOT NULL, month VARCHAR NOT NULL, end_user VARCHAR NOT NULL, calls BIGINT NOT NULL,
  PRIMARY KEY (integrator, month, end_user));
CREATE TABLE IF NOT EXISTS hosted_cursor (one INTEGER PRIMARY KEY, cursor VARCHAR NOT NULL);
${INVOICE_SCHEMA}`;

/** The key of a usage slot in a {@link UsageDelta}: integrator, month and, for end users, the hash. */
export function slotKey(...parts: string[]): string {
  return parts.join('\u0000');
}

/**
 * Opens (or creates) the store; throws when another process holds the file (the CLI then uses the inbox). `random`
 * draws the pay-link tokens of invoices stored before there were any.
 */
export async function openIntegratorStore(
  path: string,
  random: (n: number) => Uint8Array = (n) => new Uint8Array(randomBytes(n)),
): Promise<IntegratorStore> {
  const instance = await DuckDBInstance.create(path);
  const db = await instance.connect();
  await db.run(SCHEMA);
  await tokenizeInvoices(db, random);
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const rows = (sql: string, values: DuckDBValue[] = []) => serial(() => select(db, sql, values));

  return {
    createIntegrator: (row) =>
      serial(() =>
        db.run('INSERT INTO integrators VALUES (?, ?, ?, ?)', [
          row.id,
          row.name,
          row.creditLimitAtomic.toString(),
          row.createdAt,
        ]),
      ).then(() => undefined),
    addKey: (row) =>
      serial(() =>
        db.run('INSERT INTO service_keys VALUES (?, ?, ?, ?, ?, ?, ?)', [
          row.id,
          row.integrator,
          row.secretHash,
          row.label,
          row.state,
          row.createdAt,
          row.changedAt,
        ]),
      ).then(() => undefined),
    setKeyState: (keyId, state, at) =>
      serial(() =>
        db.run('UPDATE service_keys SET state = ?, changed_at = ? WHERE id = ?', [state, at, keyId]),
      ).then(() => undefined),
    integrators: async () => (await rows('SELECT * FROM integrators ORDER BY id')).map(integratorOf),
    keys: async () =>
      (await rows('SELECT * FROM service_keys ORDER BY integrator, created_at, id')).map(keyOf),
    usageCursor: async () => {
      const [row] = await rows('SELECT cursor FROM hosted_cursor WHERE one = 1');
      return row ? String(row.cursor) : null;
    },
    foldUsage: (delta, from, to) => serial(() => fold(db, delta, from, to)),
    usage: (filter) => usageRows(rows, filter),
    endUserHashes: async (integrator, month) =>
      (
        await rows('SELECT end_user FROM hosted_end_users WHERE integrator = ? AND month = ?', [
          integrator,
          month,
        ])
      ).map((r) => String(r.end_user)),
    ...duckdbInvoices(db, serial),
    close: () =>
      serial(async () => {
        db.closeSync();
        instance.closeSync();
      }),
  };
}

/** Calls and end users per integrator and month, as the filter narrows them. */
async function usageRows(
  rows: (sql: string, values?: DuckDBValue[]) => Promise<Record<string, unknown>[]>,
  filter: Parameters<IntegratorStore['usage']>[0],
): Promise<UsageRow[]> {
  const where: string[] = [];
  const values: DuckDBValue[] = [];
  if (filter.integrator !== undefined) {
    where.push('u.integrator = ?');
    values.push(filter.integrator);
  }
  if (filter.month !== undefined) {
    where.push('u.month = ?');
    values.push(filter.month);
  }
  const sql = `SELECT u.integrator, u.month, u.calls,
      (SELECT count(*) FROM hosted_end_users e WHERE e.integrator = u.integrator AND e.month = u.month) AS end_users
    FROM hosted_usage u ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY u.month, u.integrator`;
  return (await rows(sql, values)).map((r) => ({
    integrator: String(r.integrator),
    month: String(r.month),
    calls: Number(r.calls),
    endUsers: Number(r.end_users),
  }));
}

async function fold(
  db: DuckDBConnection,
  delta: UsageDelta,
  from: string | null,
  to: string,
): Promise<boolean> {
  await db.run('BEGIN TRANSACTION');
  try {
    const [current] = await select(db, 'SELECT cursor FROM hosted_cursor WHERE one = 1', []);
    if ((current ? String(current.cursor) : null) !== from) {
      await db.run('ROLLBACK');
      return false;
    }
    const usage = [...delta.calls].map(([slot, calls]) => [...slot.split('\u0000').slice(0, 2), calls]);
    await upsert(db, 'hosted_usage (integrator, month, calls)', usage, 'integrator, month');
    const users = [...delta.endUsers].map(([slot, calls]) => [...slot.split('\u0000').slice(0, 3), calls]);
    await upsert(
      db,
      'hosted_end_users (integrator, month, end_user, calls)',
      users,
      'integrator, month, end_user',
    );
    await db.run(
      'INSERT INTO hosted_cursor VALUES (1, ?) ON CONFLICT (one) DO UPDATE SET cursor = excluded.cursor',
      [to],
    );
    await db.run('COMMIT');
    return true;
  } catch (error) {
    await db.run('ROLLBACK');
    throw error;
  }
}

const CHUNK = 500;

/** Adds `calls` (the last value of each row) to existing rows, in multi-row statements. */
async function upsert(db: DuckDBConnection, table: string, rows: DuckDBValue[][], conflict: string) {
  const name = table.slice(0, table.indexOf(' '));
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const tuple = `(${Array(chunk[0]?.length ?? 0)
      .fill('?')
      .join(',')})`;
    await db.run(
      `INSERT INTO ${table} VALUES ${chunk.map(() => tuple).join(',')}
       ON CONFLICT (${conflict}) DO UPDATE SET calls = ${name}.calls + excluded.calls`,
      chunk.flat(),
    );
  }
}

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
