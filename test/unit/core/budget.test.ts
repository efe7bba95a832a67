import { describe, expect, it } from 'vitest';
import { commitSpend, createBudget, decideSpend, scaledUsdText } from '../../../core/budget.ts';
import { BASE } from '../../../core/networks.ts';

describe('the known-answer budget', () => {
  it('reads a USD budget exactly and refuses what is not a decimal', () => {
    expect(createBudget('0.05')).toEqual({ limit: 50_000_000_000_000_000n, committed: 0n });
    expect(createBudget('1e-2')?.limit).toBe(10_000_000_000_000_000n);
    for (const bad of ['-1', 'abc', '', 'NaN', '0x10']) expect(createBudget(bad)).toBeNull();
  });

  it('allows a payment that fits exactly and refuses one atomic unit more, before any signature', () => {
    const budget = createBudget('0.03');
    if (budget === null) throw new Error('budget');
    const first = decideSpend(budget, BASE, '20000');
    if (!first.ok) throw new Error(first.message);
    const after = commitSpend(budget, first.cost);
    expect(decideSpend(after, BASE, '10000')).toMatchObject({ ok: true });
    const refused = decideSpend(after, BASE, '10001');
    expect(refused).toEqual({
      ok: false,
      message: 'refused before signing: USD 0.010001 would exceed the budget left, USD 0.01 of 0.03',
    });
  });

  it('never prices an amount it cannot convert', () => {
    const budget = createBudget('100');
    if (budget === null) throw new Error('budget');
    expect(decideSpend(budget, 'eip155:999999', '1').ok).toBe(false);
    expect(decideSpend(budget, BASE, '1.5').ok).toBe(false);
    expect(decideSpend(budget, BASE, '-1').ok).toBe(false);
  });

  it('prints scaled amounts as plain decimals', () => {
    expect(scaledUsdText(0n)).toBe('0');
    expect(scaledUsdText(10n ** 18n * 12n + 5n * 10n ** 16n)).toBe('12.05');
  });
});
