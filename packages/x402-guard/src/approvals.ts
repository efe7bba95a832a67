/**
 * `pay` answers kept for reuse: the same URL, method and terms hash is approved again without asking Spotcheck while
 * the probe behind the answer is fresh (its `probe.probed_at` plus `probe.cache_ttl_s`, the window in which Spotcheck
 * itself would answer from the same probe). Bounded: the oldest entry goes first past {@link MAX_APPROVALS}.
 */

/** At most this many approvals are kept. */
export const MAX_APPROVALS = 1024;

/** The approvals of one guard. */
export type Approvals = {
  /** True while an approval of exactly these terms is fresh. */
  has(key: ApprovalKey, now: number): boolean;
  /** Keeps an approval until `expiresAt` (ms since the epoch). */
  add(key: ApprovalKey, expiresAt: number): void;
};

/** What an approval is for. */
export type ApprovalKey = { url: string; method: string; termsSha256: string };

/** Creates an empty set of approvals. */
export function createApprovals(): Approvals {
  const entries = new Map<string, number>();
  const keyOf = (key: ApprovalKey) => `${key.method} ${key.termsSha256} ${key.url}`;
  return {
    has(key, now) {
      const id = keyOf(key);
      const expiresAt = entries.get(id);
      if (expiresAt === undefined) return false;
      if (expiresAt > now) return true;
      entries.delete(id);
      return false;
    },
    add(key, expiresAt) {
      const id = keyOf(key);
      entries.delete(id);
      entries.set(id, expiresAt);
      while (entries.size > MAX_APPROVALS) {
        const oldest = entries.keys().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest);
      }
    },
  };
}

/**
 * When an approval stops being fresh: the probe's time plus its reuse window, and never later than that window from
 * now (a clock ahead of the service's must not stretch it). Null when the answer carries no probe time (a free
 * answer): such an approval is not kept.
 */
export function approvalExpiry(
  probe: { probed_at: string; cache_ttl_s: number } | null,
  now: number,
): number | null {
  if (probe === null) return null;
  const probedAt = Date.parse(probe.probed_at);
  if (!Number.isFinite(probedAt) || !(probe.cache_ttl_s > 0)) return null;
  const windowMs = probe.cache_ttl_s * 1000;
  return Math.min(probedAt + windowMs, now + windowMs);
}
