/**
 * Monthly hosted invoices (docs/api.md §1.8, §8): one per integrator and month, lines per band, the total in USDC
 * on Base payable to the service wallet, and the pay link with its random token. Uses of earlier months that reached
 * the usage after those months were invoiced are billed here too (`earlier_months`, `core/late-uses.ts`). The invoice
 * is data; signing, files and the PDF are `io/`'s.
 */
import { atomicToUsdText } from './amount.ts';
import { amountDue, BANDS, bandCounts, bandPrice, monthBounds } from './hosted.ts';
import { WATCH_LIMITS } from './limits.ts';
import { BASE, BASE_USDC } from './networks.ts';

export type InvoiceLine = {
  band: (typeof BANDS)[number];
  quantity: number;
  unit_price_atomic: string;
  amount_atomic: string;
  amount_usd: string;
};

/**
 * Uses of an earlier month billed on this invoice: they reached the usage after that month's invoices ran. Priced
 * as that month's next calls, after the ones already billed, so their bands are the month's own.
 */
export type EarlierMonthLine = {
  month: string;
  calls: number;
  amount_atomic: string;
  amount_usd: string;
};

/**
 * Hosted watches billed on this invoice: each watch whose active span (made to expired, deleted, paused or stopped)
 * overlaps the month counts one watch-month, at `WATCH_LIMITS.watchMonthAtomic`.
 */
export type WatchMonthsLine = {
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
  /** Absent on invoices issued before late uses were billed: read it as empty. */
  earlier_months?: EarlierMonthLine[];
  /** Present only when the integrator had hosted watches in the month, so invoices without them keep their bytes. */
  watch_months?: WatchMonthsLine;
  total: { atomic: string; usd: string };
  currency: 'USDC';
  network: string;
  asset: string;
  pay_to: string;
  pay_url: string;
};

const ID = /^inv-\d{6}-[a-z0-9]{1,40}$/;
const PAY_TOKEN = /^[0-9a-f]{32}$/;

/** A new pay-link token: 128 random bits as hex (`random` is the injected source of bytes). */
export function newPayToken(random: (n: number) => Uint8Array): string {
  return Array.from(random(16), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** True for a well-formed pay-link token. */
export function isPayToken(value: unknown): value is string {
  return typeof value === 'string' && PAY_TOKEN.test(value);
}

/** The link that pays an invoice: its pay route with the token, which alone lets a caller without the key in. */
export function payUrl(baseUrl: string, id: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/v1/invoices/${id}/pay?token=${token}`;
}

/** The id of an integrator's invoice for a month: one per pair, so generating twice finds the first. */
export function invoiceId(integrator: string, month: string): string {
  return `inv-${month.replace('-', '')}-${integrator}`;
}

/** True for a well-formed invoice id (safe as a file name). */
export function isInvoiceId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value);
}

/**
 * Builds the invoice of `calls` hosted checks, plus the `earlier` months' late uses. `issuedAt` is the end of the
 * month, so the same usage and token always give the same invoice (reproducible bytes; a run keeps a stored one).
 */
export function buildInvoice(input: {
  integrator: { id: string; name: string };
  month: string;
  calls: number;
  endUsers: number;
  payTo: string;
  baseUrl: string;
  payToken: string;
  earlier?: ReadonlyArray<{ month: string; calls: number; billedBefore: number }>;
  /** Hosted watches whose active span overlaps the month. */
  watchMonths?: number;
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
  const earlier = (input.earlier ?? []).map((late): EarlierMonthLine => {
    const amount = amountDue(late.billedBefore + late.calls) - amountDue(late.billedBefore);
    return {
      month: late.month,
      calls: late.calls,
      amount_atomic: amount.toString(),
      amount_usd: atomicToUsdText(amount.toString()),
    };
  });
  const watches = watchMonthsLine(input.watchMonths ?? 0);
  const total = [...lines, ...earlier, ...(watches ? [watches] : [])]
    .reduce((sum, line) => sum + BigInt(line.amount_atomic), 0n)
    .toString();
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
    earlier_months: earlier,
    ...(watches ? { watch_months: watches } : {}),
    total: { atomic: total, usd: atomicToUsdText(total) },
    currency: 'USDC',
    network: BASE,
    asset: BASE_USDC,
    pay_to: input.payTo,
    pay_url: payUrl(input.baseUrl, id, input.payToken),
  };
}

/** The watch-months line of `quantity` hosted watch-months; none for zero. */
function watchMonthsLine(quantity: number): WatchMonthsLine | null {
  if (quantity <= 0) return null;
  const unit = BigInt(WATCH_LIMITS.watchMonthAtomic);
  const amount = (unit * BigInt(quantity)).toString();
  return {
    quantity,
    unit_price_atomic: unit.toString(),
    amount_atomic: amount,
    amount_usd: atomicToUsdText(amount),
  };
}
