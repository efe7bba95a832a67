import { describe, expect, it } from 'vitest';
import { atomicToUsdText, usdToAtomic } from '../../../core/amount.ts';
import { amountDue, bandCounts, bandOf, isMonth, monthBounds, utcMonth } from '../../../core/hosted.ts';
import {
  buildInvoice,
  invoiceId,
  isInvoiceId,
  isPayToken,
  newPayToken,
  payUrl,
} from '../../../core/invoice.ts';

describe('hosted bands (docs/api.md §5.4: 1-1,000 free_allowance, 1,001-2,000 standard 20000, from 2,001 volume 10000)', () => {
  it.each([
    [1, 'free_allowance', 0n],
    [1000, 'free_allowance', 0n],
    [1001, 'standard', 20000n],
    [2000, 'standard', 20000n],
    [2001, 'volume', 10000n],
    [1_000_000, 'volume', 10000n],
  ] as const)('call %i is %s at %i atomic', (n, band, price) => {
    expect(bandOf(n)).toEqual({ band, priceAtomic: price });
  });

  it('refuses call numbers that are not positive integers', () => {
    for (const n of [0, -1, 1.5, Number.NaN]) expect(() => bandOf(n)).toThrow(RangeError);
  });

  it('splits a month into bands and prices it exactly', () => {
    expect(bandCounts(0)).toEqual({ free_allowance: 0, standard: 0, volume: 0 });
    expect(bandCounts(1500)).toEqual({ free_allowance: 1000, standard: 500, volume: 0 });
    expect(bandCounts(2500)).toEqual({ free_allowance: 1000, standard: 1000, volume: 500 });
    expect(amountDue(1000)).toBe(0n);
    expect(amountDue(1001)).toBe(20000n);
    expect(amountDue(2000)).toBe(20_000_000n);
    expect(amountDue(2001)).toBe(20_010_000n);
    // The sum of each call's own price, for every n: the two rules can never disagree.
    let sum = 0n;
    for (let n = 1; n <= 2600; n++) {
      sum += bandOf(n).priceAtomic;
      if (amountDue(n) !== sum) throw new Error(`amountDue(${n}) = ${amountDue(n)}, sum ${sum}`);
    }
    expect(sum).toBe(amountDue(2600));
  });

  it('names UTC months and their bounds', () => {
    expect(utcMonth(new Date('2026-02-28T23:59:59.999Z'))).toBe('2026-02');
    expect(utcMonth(new Date('2026-03-01T00:00:00Z'))).toBe('2026-03');
    expect(monthBounds('2026-12')).toEqual({
      start: new Date('2026-12-01T00:00:00Z'),
      end: new Date('2027-01-01T00:00:00Z'),
    });
    expect(isMonth('2026-13')).toBe(false);
    expect(isMonth('2026-1')).toBe(false);
    expect(() => monthBounds('2026-00')).toThrow(RangeError);
  });

  it('converts USD and atomic USDC exactly', () => {
    expect(usdToAtomic('12.5')).toBe('12500000');
    expect(usdToAtomic('0')).toBe('0');
    expect(usdToAtomic('0.0000001')).toBeNull();
    expect(usdToAtomic('-1')).toBeNull();
    expect(atomicToUsdText('20010000')).toBe('20.01');
    expect(atomicToUsdText('0')).toBe('0');
    expect(atomicToUsdText('5')).toBe('0.000005');
  });
});

const TOKEN = '0123456789abcdef0123456789abcdef';

describe('invoices', () => {
  it('has lines per band and a total in USDC on Base', () => {
    const invoice = buildInvoice({
      integrator: { id: 'acme', name: 'Acme Router' },
      month: '2026-04',
      calls: 2500,
      endUsers: 7,
      payTo: '0x1111111111111111111111111111111111111111',
      baseUrl: 'https://spotcheck.example/',
      payToken: TOKEN,
    });
    expect(invoice.id).toBe('inv-202604-acme');
    expect(isInvoiceId(invoice.id)).toBe(true);
    expect(invoice.lines).toEqual([
      { band: 'free_allowance', quantity: 1000, unit_price_atomic: '0', amount_atomic: '0', amount_usd: '0' },
      {
        band: 'standard',
        quantity: 1000,
        unit_price_atomic: '20000',
        amount_atomic: '20000000',
        amount_usd: '20',
      },
      {
        band: 'volume',
        quantity: 500,
        unit_price_atomic: '10000',
        amount_atomic: '5000000',
        amount_usd: '5',
      },
    ]);
    expect(invoice.total).toEqual({ atomic: '25000000', usd: '25' });
    expect(invoice).toMatchObject({
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      issued_at: '2026-05-01T00:00:00.000Z',
      pay_url: `https://spotcheck.example/v1/invoices/inv-202604-acme/pay?token=${TOKEN}`,
      earlier_months: [],
    });
  });

  it('bills late uses of earlier months at the bands of their own month, in the total', () => {
    const invoice = buildInvoice({
      integrator: { id: 'acme', name: 'Acme Router' },
      month: '2026-05',
      calls: 0,
      endUsers: 0,
      payTo: '0x1111111111111111111111111111111111111111',
      baseUrl: 'https://spotcheck.example',
      payToken: TOKEN,
      // April billed 999 calls; 3 more arrived late: one free, two at USD 0.02. March billed 2,000; one more at 0.01.
      earlier: [
        { month: '2026-03', calls: 1, billedBefore: 2000 },
        { month: '2026-04', calls: 3, billedBefore: 999 },
      ],
    });
    expect(invoice.earlier_months).toEqual([
      { month: '2026-03', calls: 1, amount_atomic: '10000', amount_usd: '0.01' },
      { month: '2026-04', calls: 3, amount_atomic: '40000', amount_usd: '0.04' },
    ]);
    expect(invoice.total).toEqual({ atomic: '50000', usd: '0.05' });
    expect(invoice.calls).toBe(0);
  });

  it('draws pay tokens of 128 bits as hex, and knows one', () => {
    const token = newPayToken((n) => new Uint8Array(n).fill(0xab));
    expect(token).toBe('ab'.repeat(16));
    expect(isPayToken(token)).toBe(true);
    for (const bad of ['', 'AB'.repeat(16), 'ab'.repeat(15), `${'ab'.repeat(16)}\n`, null])
      expect(isPayToken(bad)).toBe(false);
    expect(payUrl('https://s.example/', 'inv-202604-acme', token)).toBe(
      `https://s.example/v1/invoices/inv-202604-acme/pay?token=${token}`,
    );
  });

  it('refuses ids that could leave the invoices folder', () => {
    expect(invoiceId('acme', '2026-04')).toBe('inv-202604-acme');
    for (const bad of ['inv-202604-../x', 'inv-2026-acme', 'INV-202604-acme', 'inv-202604-']) {
      expect(isInvoiceId(bad)).toBe(false);
    }
  });
});
