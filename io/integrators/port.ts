/**
 * The integrator store's port (hosted mode, docs/api.md §5.4): integrators and their credit limits, keys (only the hash
 * of the secret) and their state, the monthly usage snapshot with the journal cursor it covers, end users by salted
 * hash, and invoices with their payment. Two backends: a DuckDB file of its own (`duckdb.ts`), and PostgreSQL, shared
 * by every instance (`postgres.ts`, `DATABASE_URL`). Both pass `test/integration/io/integrators.contract.test.ts`.
 */

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
  claim: InvoiceClaim | null;
};
/**
 * One payment's hold on an invoice while it settles. `authorization` is the EIP-3009 authorization being settled
 * (null for a claim stored before it was kept): should the instance die between the settlement landing and the
 * invoice being marked paid, the chain still says whether that authorization was used, and by which transaction.
 */
export type InvoiceClaim = {
  holder: string;
  until: number;
  authorization: ClaimAuthorization | null;
};
/** The signer and nonce of the EIP-3009 authorization a claim settles (lower-case hex). */
export type ClaimAuthorization = { payer: string; nonce: string };
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
   * instance made it; false for an invoice paid, with nothing due, unknown, or claimed by someone else. The claim
   * keeps `authorization`, the one being settled, so a claim left by a dead instance can be checked on chain.
   */
  claimInvoice(
    id: string,
    holder: string,
    until: number,
    now: number,
    authorization?: ClaimAuthorization | null,
  ): Promise<boolean>;
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

/** The key of a usage slot in a {@link UsageDelta}: integrator, month and, for end users, the hash. */
export function slotKey(...parts: string[]): string {
  return parts.join('\u0000');
}
