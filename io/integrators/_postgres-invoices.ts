/**
 * The invoice half of the PostgreSQL integrator store (`postgres-integrators.ts`): invoices with their pay-link token
 * and settling claim, the overpayments, and the months whose invoices ran. The same contract as DuckDB's
 * (`_duckdb-invoices.ts`); each method is one statement, so a claim is taken once across instances.
 */
import type { Sql } from 'postgres';
import { invoiceOf, overpaymentOf } from './_invoice-rows.ts';
import type { InvoiceStore } from './port.ts';

/** The invoice methods over a migrated pool. */
export function postgresInvoices(sql: Sql): InvoiceStore {
  return {
    async addInvoice(row) {
      const inserted =
        await sql`INSERT INTO invoices (id, integrator, month, total_atomic, body, status, tx, paid_at, pay_token)
        VALUES (${row.id}, ${row.integrator}, ${row.month}, ${row.totalAtomic}, ${JSON.stringify(row.body)},
          ${row.status}, ${row.tx}, ${row.paidAt}, ${row.payToken})
        ON CONFLICT (id) DO NOTHING RETURNING id`;
      return inserted.length > 0;
    },
    async invoice(id) {
      const [row] = await sql`SELECT * FROM invoices WHERE id = ${id}`;
      return row ? invoiceOf(row) : null;
    },
    invoices: async (integrator) =>
      (await sql`SELECT * FROM invoices WHERE integrator = ${integrator} ORDER BY month`).map(invoiceOf),
    // One conditional statement: PostgreSQL's row lock makes concurrent claims from any instance queue, and each
    // re-checks the condition on the row as the one before it left it, so exactly one takes it.
    async claimInvoice(id, holder, until, now, authorization = null) {
      const taken =
        await sql`UPDATE invoices SET status = 'settling', claimant = ${holder}, claim_until = ${until},
          claim_payer = ${authorization?.payer ?? null}, claim_nonce = ${authorization?.nonce ?? null}
        WHERE id = ${id} AND (status = 'open' OR (status = 'settling' AND claim_until <= ${now})) RETURNING id`;
      return taken.length > 0;
    },
    async releaseInvoice(id, holder) {
      await sql`UPDATE invoices SET status = 'open', claimant = NULL, claim_until = NULL, claim_payer = NULL,
          claim_nonce = NULL
        WHERE id = ${id} AND status = 'settling' AND claimant = ${holder}`;
    },
    async markInvoicePaid(id, tx, at) {
      const paid =
        await sql`UPDATE invoices SET status = 'paid', tx = ${tx}, paid_at = ${at}, claimant = NULL,
          claim_until = NULL, claim_payer = NULL, claim_nonce = NULL
        WHERE id = ${id} AND status IN ('open', 'settling') RETURNING id`;
      return paid.length > 0;
    },
    async addOverpayment(row) {
      await sql`INSERT INTO invoice_overpayments (tx, invoice_id, integrator, payer, amount_atomic, recorded_at)
        VALUES (${row.tx}, ${row.invoice}, ${row.integrator}, ${row.payer}, ${row.amountAtomic}, ${row.at})
        ON CONFLICT (tx) DO NOTHING`;
    },
    async overpayments(filter) {
      const rows = await sql`SELECT * FROM invoice_overpayments
        WHERE (${filter.integrator ?? null}::text IS NULL OR integrator = ${filter.integrator ?? null})
          AND (${filter.invoice ?? null}::text IS NULL OR invoice_id = ${filter.invoice ?? null})
        ORDER BY recorded_at, tx`;
      return rows.map(overpaymentOf);
    },
    async markInvoiceRun(month, at) {
      await sql`INSERT INTO invoice_runs (month, ran_at) VALUES (${month}, ${at}) ON CONFLICT (month) DO NOTHING`;
    },
    invoiceRuns: async () =>
      (await sql`SELECT month FROM invoice_runs ORDER BY month`).map((r) => String(r.month)),
  };
}
