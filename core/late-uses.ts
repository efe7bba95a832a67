/**
 * Late hosted uses: a use reserved in month M can reach the usage after M's invoices were issued (reserved at the
 * month's last instant and journaled, or committed in PostgreSQL, after the invoice run read the month). Such uses are
 * billed on the integrator's next invoice, the first one issued for a later month, as an `earlier_months` line of
 * M: never lost, never billed twice, since what an invoice bills is read back from the invoices themselves.
 */

/** An issued invoice as the late-use rule reads it: its month and its signed body. */
export type IssuedInvoice = { month: string; body: Record<string, unknown> };

/** Uses of one earlier month still to bill, and how many of that month's uses were billed before them. */
export type LateUse = { month: string; calls: number; billedBefore: number };

/** Calls billed per month by `invoices`: each invoice's own month, plus the earlier months it billed late. */
export function billedCalls(invoices: readonly IssuedInvoice[]): Map<string, number> {
  const billed = new Map<string, number>();
  const add = (month: string, calls: number) => billed.set(month, (billed.get(month) ?? 0) + calls);
  for (const invoice of invoices) {
    add(invoice.month, countOf(invoice.body.calls));
    const earlier = invoice.body.earlier_months;
    if (!Array.isArray(earlier)) continue;
    for (const line of earlier as Array<Record<string, unknown>>) {
      if (typeof line?.month === 'string') add(line.month, countOf(line.calls));
    }
  }
  return billed;
}

/**
 * The uses an integrator's invoice for `month` must bill late: for each earlier month whose invoices already ran
 * (`runs`) or that has an invoice of this integrator, the month's uses beyond those billed so far. A month that was
 * never run is left to its own run. Sorted by month.
 * @example lateUses({ month: '2026-05', usage: [{ month: '2026-04', calls: 1002 }], invoices: [{ month: '2026-04', body: { calls: 1000 } }], runs: new Set(['2026-04']) })
 * // [{ month: '2026-04', calls: 2, billedBefore: 1000 }]
 */
export function lateUses(input: {
  month: string;
  usage: ReadonlyArray<{ month: string; calls: number }>;
  invoices: readonly IssuedInvoice[];
  runs: ReadonlySet<string>;
}): LateUse[] {
  const billed = billedCalls(input.invoices);
  const invoiced = new Set(input.invoices.map((invoice) => invoice.month));
  return input.usage
    .filter((row) => row.month < input.month && (input.runs.has(row.month) || invoiced.has(row.month)))
    .map((row) => {
      const billedBefore = billed.get(row.month) ?? 0;
      return { month: row.month, calls: row.calls - billedBefore, billedBefore };
    })
    .filter((late) => late.calls > 0)
    .sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
}

function countOf(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}
