/**
 * The invoice half of the integrator store's contract, run on both backends by `integrators.contract.test.ts` (DuckDB,
 * `io/integrators/duckdb.ts`; PostgreSQL, `io/integrators/postgres.ts`): the settling claim is taken by exactly one of concurrent callers (on
 * PostgreSQL, through three pools standing for three instances), expires, is given back only by its holder; marking
 * paid happens once and says when it did not; overpayments and invoiced months are kept; the pay token is stored.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntegratorStore, InvoiceRow } from '../../../io/integrators/port.ts';

/** The stores one test uses: several handles on the same data where the backend allows it. */
export type InvoiceStores = { stores: IntegratorStore[]; close(): Promise<void> };

const NOW = 1_800_000_000;
const TOKEN = '0123456789abcdef0123456789abcdef';

const row = (id: string, status: InvoiceRow['status'] = 'open'): Omit<InvoiceRow, 'claim'> => ({
  id,
  integrator: 'acme',
  month: '2026-04',
  totalAtomic: '40000',
  body: { id, calls: 1002 },
  status,
  tx: null,
  paidAt: null,
  payToken: TOKEN,
});

/** Runs the contract on the stores `open` gives. */
export function testInvoiceStore(name: string, open: () => Promise<InvoiceStores>): void {
  describe(`invoice store contract: ${name}`, () => {
    let opened: InvoiceStores;
    let stores: IntegratorStore[];
    const first = () => stores[0] as IntegratorStore;
    beforeEach(async () => {
      opened = await open();
      stores = opened.stores;
      await first().addInvoice(row('inv-202604-acme'));
    });
    afterEach(async () => {
      await opened.close();
    });

    it('stores the pay token and starts without a claim', async () => {
      expect(await first().invoice('inv-202604-acme')).toMatchObject({
        status: 'open',
        payToken: TOKEN,
        claim: null,
      });
    });

    it('lets exactly one of many concurrent claims take an invoice, on any handle', async () => {
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          stores[i % stores.length]?.claimInvoice('inv-202604-acme', `holder-${i}`, NOW + 300, NOW),
        ),
      );
      expect(results.filter((taken) => taken === true)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await first().invoice('inv-202604-acme')).toMatchObject({
        status: 'settling',
        claim: { holder: `holder-${winner}`, until: NOW + 300 },
      });
    });

    it('keeps a claim until it expires; then another payer may take it', async () => {
      expect(await first().claimInvoice('inv-202604-acme', 'a', NOW + 300, NOW)).toBe(true);
      expect(await first().claimInvoice('inv-202604-acme', 'b', NOW + 600, NOW + 299)).toBe(false);
      expect(await first().claimInvoice('inv-202604-acme', 'b', NOW + 900, NOW + 300)).toBe(true);
      // The lapsed holder can no longer give it back.
      await first().releaseInvoice('inv-202604-acme', 'a');
      expect((await first().invoice('inv-202604-acme'))?.claim?.holder).toBe('b');
    });

    it('keeps the authorization a claim settles, and forgets it with the claim', async () => {
      const authorization = { payer: `0x${'11'.repeat(20)}`, nonce: `0x${'ab'.repeat(32)}` };
      expect(await first().claimInvoice('inv-202604-acme', 'a', NOW + 300, NOW, authorization)).toBe(true);
      expect((await first().invoice('inv-202604-acme'))?.claim).toEqual({
        holder: 'a',
        until: NOW + 300,
        authorization,
      });
      // A later claim of a lapsed one names its own authorization, or none.
      expect(await first().claimInvoice('inv-202604-acme', 'b', NOW + 900, NOW + 300)).toBe(true);
      expect((await first().invoice('inv-202604-acme'))?.claim?.authorization).toBeNull();
      expect(await first().claimInvoice('inv-202604-acme', 'c', NOW + 1_500, NOW + 900, authorization)).toBe(
        true,
      );
      await first().releaseInvoice('inv-202604-acme', 'c');
      expect(await first().claimInvoice('inv-202604-acme', 'd', NOW + 1_500, NOW + 900)).toBe(true);
      expect((await first().invoice('inv-202604-acme'))?.claim?.authorization).toBeNull();
    });

    it('gives a claim back to the open invoice only for its holder', async () => {
      expect(await first().claimInvoice('inv-202604-acme', 'a', NOW + 300, NOW)).toBe(true);
      await first().releaseInvoice('inv-202604-acme', 'someone-else');
      expect((await first().invoice('inv-202604-acme'))?.status).toBe('settling');
      await first().releaseInvoice('inv-202604-acme', 'a');
      expect(await first().invoice('inv-202604-acme')).toMatchObject({ status: 'open', claim: null });
      expect(await first().claimInvoice('inv-202604-acme', 'b', NOW + 300, NOW)).toBe(true);
    });

    it('marks paid once, says so when it did not, and a paid invoice is never claimed again', async () => {
      expect(await first().claimInvoice('inv-202604-acme', 'a', NOW + 300, NOW)).toBe(true);
      const marks = await Promise.all(
        stores.map((store, i) => store.markInvoicePaid('inv-202604-acme', `0x${i}`, '2026-05-02T00:00:00Z')),
      );
      expect(marks.filter(Boolean)).toHaveLength(1);
      const paid = await first().invoice('inv-202604-acme');
      expect(paid).toMatchObject({ status: 'paid', tx: `0x${marks.indexOf(true)}`, claim: null });
      expect(await first().markInvoicePaid('inv-202604-acme', '0xlate', '2026-05-03T00:00:00Z')).toBe(false);
      expect((await first().invoice('inv-202604-acme'))?.tx).toBe(paid?.tx);
      expect(await first().claimInvoice('inv-202604-acme', 'c', NOW + 10_000, NOW + 9_000)).toBe(false);
    });

    it('claims neither an invoice with nothing due nor an unknown one', async () => {
      await first().addInvoice(row('inv-202604-tiny', 'nothing_due'));
      expect(await first().claimInvoice('inv-202604-tiny', 'a', NOW + 300, NOW)).toBe(false);
      expect(await first().claimInvoice('inv-202604-nobody', 'a', NOW + 300, NOW)).toBe(false);
      expect(await first().markInvoicePaid('inv-202604-tiny', '0x1', '2026-05-02T00:00:00Z')).toBe(false);
    });

    it('records an overpayment once per transaction, read by integrator and by invoice', async () => {
      const over = {
        invoice: 'inv-202604-acme',
        integrator: 'acme',
        tx: `0x${'ab'.repeat(32)}`,
        payer: '0x1111111111111111111111111111111111111111',
        amountAtomic: '40000',
        at: '2026-05-02T00:00:00.000Z',
      };
      await Promise.all(stores.map((store) => store.addOverpayment(over)));
      await first().addOverpayment(over);
      expect(await first().overpayments({})).toEqual([over]);
      expect(await stores.at(-1)?.overpayments({ integrator: 'acme' })).toEqual([over]);
      expect(await first().overpayments({ invoice: 'inv-202604-acme' })).toEqual([over]);
      expect(await first().overpayments({ integrator: 'other' })).toEqual([]);
      expect(await first().overpayments({ invoice: 'inv-202604-other' })).toEqual([]);
    });

    it('remembers the months whose invoices ran', async () => {
      await first().markInvoiceRun('2026-04', '2026-05-01T00:00:00.000Z');
      await first().markInvoiceRun('2026-04', '2026-05-02T00:00:00.000Z');
      await first().markInvoiceRun('2026-03', '2026-05-02T00:00:00.000Z');
      expect(await first().invoiceRuns()).toEqual(['2026-03', '2026-04']);
    });
  });
}
