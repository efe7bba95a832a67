/**
 * The free quota's durability (docs/api.md §8, CONTRIBUTING "Quota accounting"): the units an answer used are journaled
 * with it through the ledger, as an attachment the ledger carries without reading, and restored from the journal
 * at start-up, so counts survive restarts. The quota itself lives beside the ledger, in `api/`.
 */
import { utcDay } from '../core/quota.ts';
import type { Quota } from '../io/quota/memory.ts';
import type { Ledger } from '../io/receipts/ledger.ts';

/** The units one answer used: the UTC day and the `[bucket, id]` keys reserved. */
export type QuotaUse = { day: string; keys: Array<[bucket: string, id: string]> };

/** Durably records a use that has no receipt (a lookup); resolves once it is on disk. */
export function journalQuotaUse(ledger: Pick<Ledger, 'attach'>, use: QuotaUse): Promise<void> {
  return ledger.attach(use);
}

/**
 * Recovers the ledger and, from today's journal records, today's quota counts.
 * @example await recoverWithQuota(ledger, quota, new Date())
 */
export function recoverWithQuota(ledger: Pick<Ledger, 'recover'>, quota: Quota, now: Date) {
  return ledger.recover({
    attachedSince: utcDay(now),
    onAttached: (attached) => {
      const use = quotaUseOf(attached);
      if (use !== null) for (const [bucket, id] of use.keys) quota.restore(use.day, bucket, id);
    },
  });
}

/** A journaled attachment read back: a {@link QuotaUse}, or null for anything else. */
function quotaUseOf(value: unknown): QuotaUse | null {
  if (value === null || typeof value !== 'object') return null;
  const { day, keys } = value as { day?: unknown; keys?: unknown };
  if (typeof day !== 'string' || !Array.isArray(keys)) return null;
  const pairs = keys.filter(
    (key): key is [string, string] =>
      Array.isArray(key) && key.length === 2 && typeof key[0] === 'string' && typeof key[1] === 'string',
  );
  return { day, keys: pairs };
}
