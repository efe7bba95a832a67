import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import type { Accept } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { buildPayment, optionPriceUsd, paymentTermsSha256 } from '../../../core/payment.ts';

const WALLET = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const probedAt = new Date('2026-03-01T12:00:00.000Z');

function accept(overrides: Partial<Accept> = {}): Accept {
  return {
    scheme: 'exact',
    network: BASE,
    amount: '10000',
    asset: BASE_USDC,
    payTo: WALLET,
    maxTimeoutSeconds: 300,
    validBefore: null,
    extra: { name: 'USD Coin', version: '2' },
    ...overrides,
  };
}

describe('buildPayment', () => {
  it('builds the docs/api.md §2.2 object', () => {
    expect(buildPayment(accept(), probedAt)).toEqual({
      network: BASE,
      asset: BASE_USDC,
      amount: { atomic: '10000', usd: 0.01 },
      pay_to: WALLET,
      deadline: '2026-03-01T12:05:00.000Z',
      deadline_source: 'maxTimeoutSeconds',
      scheme: 'exact',
      asset_is_usdc: true,
      amount_atomic: '10000',
      amount_usd: 0.01,
    });
  });

  it('takes the deadline from validBefore, else the 60 s default', () => {
    const validBefore = Date.parse('2026-03-01T12:02:00Z') / 1000;
    expect(buildPayment(accept({ validBefore }), probedAt)).toMatchObject({
      deadline: '2026-03-01T12:02:00.000Z',
      deadline_source: 'validBefore',
    });
    expect(buildPayment(accept({ maxTimeoutSeconds: null }), probedAt)).toMatchObject({
      deadline: '2026-03-01T12:01:00.000Z',
      deadline_source: 'default_60s',
    });
  });

  it('makes an unrepresentable deadline read as already passed', () => {
    expect(buildPayment(accept({ validBefore: 1e20 }), probedAt).deadline).toBe(probedAt.toISOString());
  });

  it('reports null USD and null asset_is_usdc where the network has no known USDC', () => {
    const payment = buildPayment(accept({ network: 'eip155:999999' }), probedAt);
    expect(payment.amount.usd).toBeNull();
    expect(payment.amount_usd).toBeNull();
    expect(payment.asset_is_usdc).toBeNull();
    expect(buildPayment(accept({ asset: WALLET }), probedAt).asset_is_usdc).toBe(false);
  });
});

describe('optionPriceUsd', () => {
  const DAI = '0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb';
  it('converts atomic USDC to USD', () => {
    expect(optionPriceUsd(accept({ amount: '25000' }))).toBe(0.025);
  });
  it('is null for an asset that is not the canonical USDC of its network (never 10^12 times too much)', () => {
    expect(optionPriceUsd(accept({ asset: DAI, amount: '1000000000000000000' }))).toBeNull();
    expect(
      buildPayment(accept({ asset: DAI, amount: '1000000000000000000' }), probedAt).amount.usd,
    ).toBeNull();
  });
  it('is null for an unknown network or an amount that is not atomic', () => {
    expect(optionPriceUsd(accept({ network: 'eip155:999999' }))).toBeNull();
    expect(optionPriceUsd(accept({ amount: '0.01' }))).toBeNull();
  });
});

describe('paymentTermsSha256', () => {
  const terms = { network: BASE, asset: BASE_USDC, amountAtomic: '10000', payTo: WALLET };

  it('hashes the lower-case network|asset|amount_atomic|pay_to string', () => {
    const text = `eip155:8453|${BASE_USDC.toLowerCase()}|10000|${WALLET.toLowerCase()}`;
    expect(paymentTermsSha256(terms)).toBe(bytesToHex(sha256(utf8ToBytes(text))));
    expect(paymentTermsSha256(terms)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores address casing and changes with any term', () => {
    const hash = paymentTermsSha256(terms);
    expect(
      paymentTermsSha256({ ...terms, payTo: WALLET.toLowerCase(), asset: BASE_USDC.toUpperCase() }),
    ).toBe(hash);
    expect(paymentTermsSha256({ ...terms, amountAtomic: '10001' })).not.toBe(hash);
    expect(paymentTermsSha256({ ...terms, network: 'eip155:1' })).not.toBe(hash);
    expect(paymentTermsSha256({ ...terms, payTo: '0x1111111111111111111111111111111111111111' })).not.toBe(
      hash,
    );
  });

  it('matches a known vector', () => {
    // sha256("a|b|1|c"), computed independently with `printf 'a|b|1|c' | sha256sum`.
    expect(paymentTermsSha256({ network: 'A', asset: 'b', amountAtomic: '1', payTo: 'C' })).toBe(
      '4cb551dd97355e30b2c93314884a106820fe6f548133ddc6e0196f25f0ef28f6',
    );
  });
});
