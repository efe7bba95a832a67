/**
 * Monthly hosted invoices (spec §1.8, §8; issue 9): one per integrator and month, lines per band, the total in USDC
 * on Base payable to the service wallet. The invoice is data; signing, files and the PDF are `io/`'s.
 */
import { atomicToUsdText } from './amount.ts';
import { BANDS, bandCounts, bandPrice, monthBounds } from './hosted.ts';
import { BASE, BASE_USDC } from './networks.ts';

export type InvoiceLine = {
  band: (typeof BANDS)[number];
  quantity: number;
  unit_price_atomic: string;
  amount_atomic: string;
  amount_usd: string;
};

/** The unsigned invoice body; {@link invoiceId} names it. */
export type Invoice = {
  id: string;
  type: 'invoice';
  month: string;
  period: { start: string; end: string };
  integrator: { id: string; name: string };
  issued_at: string;
  calls: number;
  end_users: number;
  lines: InvoiceLine[];
  total: { atomic: string; usd: string };
  currency: 'USDC';
  network: string;
  asset: string;
  pay_to: string;
  pay_url: string;
};

const ID = /^inv-\d{6}-[a-z0-9]{1,40}$/;

/** The id of an integrator's invoice for a month: one per pair, so generating twice finds the first. */
export function invoiceId(integrator: string, month: string): string {
  return `inv-${month.replace('-', '')}-${integrator}`;
}

/** True for a well-formed invoice id (safe as a file name). */
export function isInvoiceId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value);
}

/**
 * Builds the invoice of `calls` hosted checks. `issuedAt` is the end of the month, so the same usage always gives
 * the same invoice (reproducible bytes, idempotent runs).
 */
export function buildInvoice(input: {
  integrator: { id: string; name: string };
  month: string;
  calls: number;
  endUsers: number;
  payTo: string;
  baseUrl: string;
}): Invoice {
  const { start, end } = monthBounds(input.month);
  const counts = bandCounts(input.calls);
  const lines = BANDS.map((band): InvoiceLine => {
    const amount = bandPrice(band) * BigInt(counts[band]);
    return {
      band,
      quantity: counts[band],
      unit_price_atomic: bandPrice(band).toString(),
      amount_atomic: amount.toString(),
      amount_usd: atomicToUsdText(amount.toString()),
    };
  });
  const total = lines.reduce((sum, line) => sum + BigInt(line.amount_atomic), 0n).toString();
  const id = invoiceId(input.integrator.id, input.month);
  return {
    id,
    type: 'invoice',
    month: input.month,
    period: { start: start.toISOString(), end: end.toISOString() },
    integrator: input.integrator,
    issued_at: end.toISOString(),
    calls: input.calls,
    end_users: input.endUsers,
    lines,
    total: { atomic: total, usd: atomicToUsdText(total) },
    currency: 'USDC',
    network: BASE,
    asset: BASE_USDC,
    pay_to: input.payTo,
    pay_url: `${input.baseUrl.replace(/\/+$/, '')}/v1/invoices/${id}/pay`,
  };
}
