/**
 * The spending limit of the service's own known-answer calls: `--budget-usd` is never exceeded,
 * and a payment that would exceed what is left is refused before anything is signed. Amounts are exact: USD and
 * atomic units meet on one integer scale (10^-18 USD), never as floats.
 */
import { isAtomic, parseUsd } from './amount.ts';
import { canonicalUsdc } from './networks.ts';

const SCALE = 18;

/** A budget in 10^-18 USD: the limit and what has been committed (signed) so far. */
export type Budget = { limit: bigint; committed: bigint };

export type BudgetDecision = { ok: true; cost: bigint } | { ok: false; message: string };

/**
 * A fresh budget of `usd` (a USD decimal as typed); null when it is not a non-negative decimal.
 * @example createBudget('0.50') // { limit: 500000000000000000n, committed: 0n }
 */
export function createBudget(usd: string): Budget | null {
  const canonical = parseUsd(usd);
  if (canonical === null) return null;
  const [whole = '0', fraction = ''] = canonical.split('.');
  if (fraction.length > SCALE) return null;
  return { limit: BigInt(whole + fraction.padEnd(SCALE, '0')), committed: 0n };
}

/**
 * Whether a payment of `amountAtomic` of `network`'s canonical USDC fits what is left. An amount in units we
 * cannot convert (unknown network, not an integer) never fits.
 * @example decideSpend(createBudget('0.02')!, 'eip155:8453', '30000') // { ok: false, message: '…' }
 */
export function decideSpend(budget: Budget, network: string, amountAtomic: string): BudgetDecision {
  const usdc = canonicalUsdc(network);
  if (usdc === null || !isAtomic(amountAtomic))
    return { ok: false, message: `cannot price ${amountAtomic} on ${network} in USD; not paid` };
  const cost = BigInt(amountAtomic) * 10n ** BigInt(SCALE - usdc.decimals);
  const left = budget.limit - budget.committed;
  if (cost > left) {
    return {
      ok: false,
      message: `refused before signing: USD ${scaledUsdText(cost)} would exceed the budget left, USD ${scaledUsdText(left)} of ${scaledUsdText(budget.limit)}`,
    };
  }
  return { ok: true, cost };
}

/** The budget after committing `cost` (a signed payment counts, whether or not it settles). */
export function commitSpend(budget: Budget, cost: bigint): Budget {
  return { limit: budget.limit, committed: budget.committed + cost };
}

/** A 10^-18 USD amount as a plain decimal. */
export function scaledUsdText(scaled: bigint): string {
  const digits = scaled.toString().padStart(SCALE + 1, '0');
  const fraction = digits.slice(-SCALE).replace(/0+$/, '');
  const whole = digits.slice(0, -SCALE);
  return fraction === '' ? whole : `${whole}.${fraction}`;
}
