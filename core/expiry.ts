/**
 * When a payment option stops being payable (docs/api.md §3.1 rule 10, docs/api.md §2.2 `deadline_source`).
 *
 * Predicates fail closed: an expiry that is not a valid date counts as already expired.
 */
import type { Accept, ExpiryCheck } from './model.ts';
import { BASE, isCanonicalUsdc } from './networks.ts';

/** Where an option's expiry came from (docs/api.md §2.2 `deadline_source`). */
export type ExpirySource = 'validBefore' | 'maxTimeoutSeconds' | 'default_60s';

/** Used when the option states neither its own expiry nor `maxTimeoutSeconds` (docs/api.md §8). */
export const DEFAULT_DEADLINE_S = 60;

/**
 * The instant an option expires: its own `validBefore` (unix seconds) where the seller states one, else
 * `probedAt + maxTimeoutSeconds`, else `probedAt + 60 s`. The date may be invalid (NaN, out of range) when
 * the inputs are; callers treat that as expired.
 * @example optionExpiry({ ...option, validBefore: null, maxTimeoutSeconds: 300 }, probedAt).source // 'maxTimeoutSeconds'
 */
export function optionExpiry(option: Accept, probedAt: Date): { at: Date; source: ExpirySource } {
  if (option.validBefore !== null) return { at: new Date(option.validBefore * 1000), source: 'validBefore' };
  if (option.maxTimeoutSeconds !== null) {
    return {
      at: new Date(probedAt.getTime() + option.maxTimeoutSeconds * 1000),
      source: 'maxTimeoutSeconds',
    };
  }
  return { at: new Date(probedAt.getTime() + DEFAULT_DEADLINE_S * 1000), source: 'default_60s' };
}

/** True for an option on Base in Base's canonical USDC: the only options the expiry check judges (docs/api.md §3.1). */
export function isBaseUsdc(option: Accept): boolean {
  return option.network === BASE && isCanonicalUsdc(BASE, option.asset);
}

/**
 * The expiry check of docs/api.md §3.1: over the Base USDC options only, `expired` is true when every one of them
 * expires at or before `now + skewS` seconds. With no Base USDC option there is nothing to judge and
 * `expired` is false (the verdict rules have already refused a challenge without a payable option). An
 * invalid date, skew or clock counts as expired.
 * @example checkExpiry(challenge.accepts, probedAt, 30, now).expired
 */
export function checkExpiry(options: Accept[], probedAt: Date, skewS: number, now: Date): ExpiryCheck {
  const considered = options.filter(isBaseUsdc).map((option) => optionExpiry(option, probedAt));
  const limit = now.getTime() + skewS * 1000;
  const limitValid = Number.isFinite(limit) && Number.isFinite(skewS) && skewS >= 0;

  let latest: { at: Date; source: ExpirySource } | null = null;
  let allExpired = true;
  for (const expiry of considered) {
    const at = expiry.at.getTime();
    if (Number.isNaN(at)) continue;
    if (latest === null || at > latest.at.getTime()) latest = expiry;
    if (limitValid && at > limit) allExpired = false;
  }
  return {
    checked_at: isValidDate(now) ? now.toISOString() : String(now),
    skew_s: skewS,
    options_considered: considered.length,
    latest_expiry: latest === null ? null : latest.at.toISOString(),
    expiry_source: latest === null ? null : latest.source,
    expired: considered.length > 0 && allExpired,
  };
}

/** True when `option` (whatever its network) expires at or before `now + skewS`, or its expiry is invalid. */
export function optionExpired(option: Accept, probedAt: Date, skewS: number, now: Date): boolean {
  const at = optionExpiry(option, probedAt).at.getTime();
  const limit = now.getTime() + skewS * 1000;
  if (!Number.isFinite(at) || !Number.isFinite(limit) || !(skewS >= 0)) return true;
  return at <= limit;
}

/** A Date that holds a real instant. */
export function isValidDate(date: Date): boolean {
  return !Number.isNaN(date.getTime());
}
