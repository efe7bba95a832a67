import { describe, expect, it } from 'vitest';
import { LIMITS, priceText } from '../../../core/limits.ts';

// Every value is written out from docs/api.md §8 here, never derived from LIMITS itself.
describe('LIMITS pins docs/api.md §8', () => {
  it.each([
    ['freeChecksPerDay', 5, 'Free endpoint checks: 5 per client per UTC day'],
    ['freeChecksPerNetwork', 25, 'Free endpoint checks: at most 25 per network'],
    ['freeLookupsPerDay', 5, 'Free lookups: 5 per client per UTC day'],
    ['freePaymentStatusPerDay', 5, 'Free payment-status checks: 5 per day'],
    ['dryRunsPerDay', 50, 'Dry runs: 50 per caller per UTC day'],
    ['probeReuseSeconds', 300, 'Probe reuse: 5 minutes'],
    ['historyKept', 30, 'History kept: last 30 observations'],
    ['checkPriceAtomic', '20000', 'then USD 0.02 per check (6-decimal USDC)'],
    ['lookupPriceAtomic', '20000', 'Paid lookup price: USD 0.02'],
    ['paymentStatusPriceAtomic', '20000', 'Free payment-status checks: then USD 0.02'],
    ['setupPackPriceAtomic', '9000000', 'Setup pack price: USD 9'],
  ] as const)('%s is %s (%s)', (key, value, _row) => {
    expect(LIMITS[key]).toBe(value);
  });

  it('holds exactly these limits, plus the address and network guards §8 leaves to the implementation', () => {
    // Not §8 rows: `dryRunsPerAddress` caps callers who mint a new `ref` per call, and the `…PerNetwork` and
    // `…PerSite` ceilings cap callers who rotate addresses (docs/decisions.md "Access and quotas").
    expect(LIMITS).toEqual({
      freeChecksPerDay: 5,
      freeChecksPerNetwork: 25,
      freeChecksPerSite: 50,
      freeLookupsPerDay: 5,
      freeLookupsPerNetwork: 25,
      freeLookupsPerSite: 50,
      freePaymentStatusPerDay: 5,
      freePaymentStatusPerNetwork: 25,
      freePaymentStatusPerSite: 50,
      dryRunsPerDay: 50,
      dryRunsPerAddress: 200,
      dryRunsPerNetwork: 500,
      dryRunsPerSite: 1000,
      probeReuseSeconds: 300,
      historyKept: 30,
      checkPriceAtomic: '20000',
      lookupPriceAtomic: '20000',
      paymentStatusPriceAtomic: '20000',
      setupPackPriceAtomic: '9000000',
    });
  });
});

describe('priceText', () => {
  it('writes a price as the texts name it, from atomic USDC', () => {
    expect(priceText(LIMITS.checkPriceAtomic)).toBe('USD 0.02');
    expect(priceText(LIMITS.setupPackPriceAtomic)).toBe('USD 9');
    expect(priceText('10000')).toBe('USD 0.01');
  });
});
