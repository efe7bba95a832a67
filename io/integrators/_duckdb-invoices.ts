/**
 * The invoice half of the DuckDB integrator store (`integrator-store.ts`): invoices with their pay-link token and
 * settling claim, the overpayments, and the months whose invoices ran. The same contract as PostgreSQL's
 * (`postgres-integrators.ts`); each method is one statement (or one serialized read-then-write), so on the one
 * process that holds the file a claim is taken once.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { newPayToken } from '../../core/invoice.ts';
import { select } from '../duckdb/query.ts';
import { invoiceOf, overpaymentOf } from './_invoice-rows.ts';
import type { IntegratorStore, InvoiceRow, InvoiceStore, Overpayment } from './port.ts';

/** The invoice tables, and the columns added to a file made before pay tokens and claims. */
export const INVOICE_SCHEMA = `
CREATE TABLE IF NOT EXISTS invoices (
  id VARCHAR PRIMARY KEY, integrator VARCHAR NOT NULL, month VARCHAR NOT NULL, total_atomic VARCHAR NOT NULL,
  body VARCHAR NOT NULL, status VARCHAR NOT NULL, tx VARCHAR, paid_at VARCHAR);
ALTER TABLE invoices ADD COLUMN IF NOT EXISTS pay_token VARCHAR;
ALTER TABLE invoices ADD COLUMN IF NOT EXISTS claimant VARCHAR;
ALTER TABLE invoices ADD COLUMN IF NOT EXISTS claim_until BIGINT;
ALTER TABLE invoices ADD COLUMN IF NOT EXISTS claim_payer VARCHAR;
ALTER TABLE invoices ADD COLUMN IF NOT EXISTS claim_nonce VARCHAR;
CREATE TABLE IF NOT EXISTS invoice_overpayments (
  tx VARCHAR PRIMARY KEY, invoice_id VARCHAR NOT NULL, integrator VARCHAR NOT NULL, payer VARCHAR NOT NULL,
  amount_atomic VARCHAR NOT NULL, recorded_at VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS invoice_runs (month VARCHAR PRIMARY KEY, ran_at VARCHAR NOT NULL);
`;

/**
 * Gives every invoice stored before pay tokens a random one (its signed body keeps its old link; the integrator
 * reads the new one with its key, docs/decisions.md "Hosted mode").
 */
export async function tokenizeInvoices(
  db: DuckDBConnection,
  random: (n: number) => Uint8Array,
): Promise<void> {
  for (const row of await select(db, 'SELECT id FROM invoices WHERE pay_token IS NULL', [])) {
    await db.run('UPDATE invoices SET pay_token = ? WHERE id = ? AND pay_token IS NULL', [
      newPayToken(random),
      String(row.id),
    ]);
  }
}

/** The invoice methods over `db`; `serial` runs one operation at a time (the store's queue). */
export function duckdbInvoices(
  db: DuckDBConnection,
  serial: <T>(work: () => Promise<T>) => Promise<T>,
): InvoiceStore {
  const rows = (sql: string, values: DuckDBValue[] = []) => serial(() => select(db, sql, values));
  const changed = (sql: string, values: DuckDBValue[]) =>
    serial(async () => (await select(db, `${sql} RETURNING id`, values)).length > 0);
  return {
    addInvoice: (row) => serial(() => insertInvoice(db, row)),
    invoice: async (id) => {
      const [row] = await rows('SELECT * FROM invoices WHERE id = ?', [id]);
      return row ? invoiceOf(row) : null;
    },
    invoices: async (integrator) =>
      (await rows('SELECT * FROM invoices WHERE integrator = ? ORDER BY month', [integrator])).map(invoiceOf),
    claimInvoice: (id, holder, until, now, authorization = null) =>
      changed(
        `UPDATE invoices SET status = 'settling', claimant = ?, claim_until = ?, claim_payer = ?, claim_nonce = ?
         WHERE id = ? AND (status = 'open' OR (status = 'settling' AND claim_until <= ?))`,
        [holder, BigInt(until), authorization?.payer ?? null, authorization?.nonce ?? null, id, BigInt(now)],
      ),
    releaseInvoice: (id, holder) =>
      changed(
        `UPDATE invoices SET status = 'open', claimant = NULL, claim_until = NULL, claim_payer = NULL,
           claim_nonce = NULL
         WHERE id = ? AND status = 'settling' AND claimant = ?`,
        [id, holder],
      ).then(() => undefined),
    markInvoicePaid: (id, tx, at) =>
      changed(
        `UPDATE invoices SET status = 'paid', tx = ?, paid_at = ?, claimant = NULL, claim_until = NULL,
           claim_payer = NULL, claim_nonce = NULL
         WHERE id = ? AND status IN ('open', 'settling')`,
        [tx, at, id],
      ),
    addOverpayment: (row) =>
      serial(() =>
        db.run(
          `INSERT INTO invoice_overpayments (tx, invoice_id, integrator, payer, amount_atomic, recorded_at)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tx) DO NOTHING`,
          [row.tx, row.invoice, row.integrator, row.payer, row.amountAtomic, row.at],
        ),
      ).then(() => undefined),
    overpayments: (filter) => overpaymentRows(rows, filter),
    markInvoiceRun: (month, at) =>
      serial(() =>
        db.run('INSERT INTO invoice_runs VALUES (?, ?) ON CONFLICT (month) DO NOTHING', [month, at]),
      ).then(() => undefined),
    invoiceRuns: async () =>
      (await rows('SELECT month FROM invoice_runs ORDER BY month')).map((r) => String(r.month)),
  };
}

/** Stores a new invoice; false when one with its id is stored already. */
async function insertInvoice(db: DuckDBConnection, row: Omit<InvoiceRow, 'claim'>): Promise<boolean> {
  const existing = await select(db, 'SELECT id FROM invoices WHERE id = ?', [row.id]);
  if (existing.length > 0) return false;
  await db.run(
    `INSERT INTO invoices (id, integrator, month, total_atomic, body, status, tx, paid_at, pay_token)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.integrator,
      row.month,
      row.totalAtomic,
      JSON.stringify(row.body),
      row.status,
      row.tx,
      row.paidAt,
      row.payToken,
    ],
  );
  return true;
}

/** The overpayments recorded, as the filter narrows them. */
async function overpaymentRows(
  rows: (sql: string, values?: DuckDBValue[]) => Promise<Record<string, unknown>[]>,
  filter: Parameters<IntegratorStore['overpayments']>[0],
): Promise<Overpayment[]> {
  const where: string[] = [];
  const values: DuckDBValue[] = [];
  if (filter.integrator !== undefined) {
    where.push('integrator = ?');
    values.push(filter.integrator);
  }
  if (filter.invoice !== undefined) {
    where.push('invoice_id = ?');
    values.push(filter.invoice);
  }
  const sql = `SELECT * FROM invoice_overpayments ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY recorded_at, tx`;
  return (await rows(sql, values)).map(overpaymentOf);
}
