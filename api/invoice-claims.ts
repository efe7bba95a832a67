/**
 * A settling claim its instance never finished (docs/decisions.md "Hosted mode"): the instance that claimed an invoice
 * died after the settlement was broadcast and before the invoice was marked paid. The money moved, so the invoice must
 * not be sold again. The claim names the EIP-3009 authorization it settles; the chain says whether that authorization
 * was used, by which transaction, and what it moved. Read with the payment-status rules (`core/payment-status.ts`).
 */
import type { Hex, PaymentStatusQuery } from '../core/payment-input.ts';
import { decidePaymentStatus } from '../core/payment-status.ts';
import type { IntegratorStore, InvoiceRow } from '../io/integrators/port.ts';
import type { ChainReaderLike } from './payment-status.ts';

export type ClaimDeps = {
  store: Pick<IntegratorStore, 'markInvoicePaid' | 'invoice'>;
  chain: ChainReaderLike | null;
  /** The wallet the invoice's payment goes to (the service wallet). */
  payTo: string;
  now: () => Date;
};

/**
 * The invoice as it stands once its claim is checked on chain: marked paid with the claim's settlement transaction
 * when that authorization moved the invoice's total to `payTo`, else unchanged (a claim still under way, a chain
 * source that did not answer, or no chain configured; the claim then lapses at its time as before).
 */
export async function settleLeftClaim(row: InvoiceRow, deps: ClaimDeps): Promise<InvoiceRow> {
  const authorization = row.claim?.authorization ?? null;
  if (row.status !== 'settling' || authorization === null || deps.chain === null) return row;
  const query = authorizationQuery(authorization.payer as Hex, authorization.nonce as Hex);
  const evidence = await deps.chain.read(query).catch(() => null);
  if (evidence === null) return row;
  const { reason, tx } = decidePaymentStatus({ query, evidence, termsExpected: null });
  const transfer = tx?.transfer ?? null;
  const paid =
    reason === 'settled_onchain' &&
    transfer !== null &&
    transfer.to.toLowerCase() === deps.payTo.toLowerCase() &&
    transfer.value === row.totalAtomic;
  if (!paid || tx === null) return row;
  await deps.store.markInvoicePaid(row.id, tx.hash, deps.now().toISOString());
  return (await deps.store.invoice(row.id)) ?? row;
}

function authorizationQuery(from: Hex, nonce: Hex): PaymentStatusQuery {
  return {
    from,
    nonce,
    validAfter: null,
    validBefore: null,
    value: null,
    to: null,
    txHash: null,
    sellerUrl: null,
    terms: null,
    accepted: null,
    source: 'from_nonce',
    payloadVersion: null,
    client: null,
    ref: null,
  };
}
