/**
 * Invoice and overpayment rows as either integrator store returns them (DuckDB, `_duckdb-invoices.ts`; PostgreSQL,
 * `postgres-integrators.ts`): one mapping, so both stores answer the same shapes.
 */
import type { ClaimAuthorization, InvoiceRow, InvoiceStatus, Overpayment } from './port.ts';

const STATUSES: readonly InvoiceStatus[] = ['open', 'settling', 'paid', 'nothing_due'];

/** An invoice from its row. */
export function invoiceOf(r: Record<string, unknown>): InvoiceRow {
  const status = STATUSES.find((s) => s === r.status) ?? 'open';
  const until = r.claim_until === null || r.claim_until === undefined ? null : Number(r.claim_until);
  return {
    id: String(r.id),
    integrator: String(r.integrator),
    month: String(r.month),
    totalAtomic: String(r.total_atomic),
    body: JSON.parse(String(r.body)) as Record<string, unknown>,
    status,
    tx: r.tx === null ? null : String(r.tx),
    paidAt: r.paid_at === null ? null : String(r.paid_at),
    payToken: String(r.pay_token ?? ''),
    claim:
      status === 'settling' && typeof r.claimant === 'string' && until !== null
        ? { holder: r.claimant, until, authorization: authorizationOf(r) }
        : null,
  };
}

function authorizationOf(r: Record<string, unknown>): ClaimAuthorization | null {
  return typeof r.claim_payer === 'string' && typeof r.claim_nonce === 'string'
    ? { payer: r.claim_payer, nonce: r.claim_nonce }
    : null;
}

/** An overpayment from its row. */
export function overpaymentOf(r: Record<string, unknown>): Overpayment {
  return {
    invoice: String(r.invoice_id),
    integrator: String(r.integrator),
    tx: String(r.tx),
    payer: String(r.payer),
    amountAtomic: String(r.amount_atomic),
    at: String(r.recorded_at),
  };
}
