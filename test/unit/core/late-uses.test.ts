/**
 * Late hosted uses (core/late-uses.ts): uses of a month that reached the usage after its invoices ran are billed on
 * a later invoice, once.
 */
import { describe, expect, it } from 'vitest';
import { billedCalls, lateUses } from '../../../core/late-uses.ts';

const invoice = (month: string, calls: number, earlier: Array<{ month: string; calls: number }> = []) => ({
  month,
  body: { calls, earlier_months: earlier },
});

describe('late uses', () => {
  it("bills what a run month's invoice did not, and nothing of a month not run yet", () => {
    expect(
      lateUses({
        month: '2026-05',
        usage: [
          { month: '2026-03', calls: 10 },
          { month: '2026-04', calls: 1002 },
          { month: '2026-05', calls: 7 },
        ],
        invoices: [invoice('2026-04', 1000)],
        runs: new Set(['2026-04']),
      }),
    ).toEqual([{ month: '2026-04', calls: 2, billedBefore: 1000 }]);
  });

  it('counts what later invoices billed late, so a use is billed once', () => {
    const invoices = [invoice('2026-04', 1000), invoice('2026-05', 7, [{ month: '2026-04', calls: 2 }])];
    expect(billedCalls(invoices).get('2026-04')).toBe(1002);
    const usage = [
      { month: '2026-04', calls: 1003 },
      { month: '2026-05', calls: 7 },
    ];
    const runs = new Set(['2026-04', '2026-05']);
    expect(lateUses({ month: '2026-06', usage, invoices, runs })).toEqual([
      { month: '2026-04', calls: 1, billedBefore: 1002 },
    ]);
    expect(
      lateUses({ month: '2026-06', usage: usage.map((u) => ({ ...u, calls: 7 })), invoices, runs }),
    ).toEqual([]);
  });

  it('bills a run month that gave the integrator no invoice, and takes a month with an invoice as run', () => {
    expect(
      lateUses({
        month: '2026-06',
        usage: [
          { month: '2026-04', calls: 3 },
          { month: '2026-05', calls: 4 },
        ],
        // April ran before runs were recorded (its invoice says so); May ran with no use of this integrator yet.
        invoices: [invoice('2026-04', 1)],
        runs: new Set(['2026-05']),
      }),
    ).toEqual([
      { month: '2026-04', calls: 2, billedBefore: 1 },
      { month: '2026-05', calls: 4, billedBefore: 0 },
    ]);
  });

  it('reads invoices issued before late billing (no earlier_months) and ignores odd members', () => {
    expect(
      billedCalls([
        { month: '2026-01', body: { calls: 5 } },
        {
          month: '2026-02',
          body: { calls: -1, earlier_months: [{ month: 7 }, null, { month: '2026-01', calls: 2 }] },
        },
      ]),
    ).toEqual(
      new Map([
        ['2026-01', 7],
        ['2026-02', 0],
      ]),
    );
  });
});
