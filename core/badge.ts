/**
 * The status badge state (docs/api.md §3.3): green `pay · stable N days` only when the latest public check of the
 * host (or of one exact path on it) is `pay` and under 72 hours old; grey `stale` or `not verified` otherwise.
 * Pure: the clock comes in as `now`. The image is drawn by `io/documents/badge-image.ts`; the site and the live server
 * both ask this module what to draw.
 */
import { isPublicState } from './public-state.ts';

/** A green badge turns grey this long after the check it shows (docs/api.md §3.3). */
export const BADGE_FRESH_MS = 72 * 3_600_000;

/** How long a grey badge may be cached: a new check can turn it green at any time. */
export const BADGE_GREY_MAX_AGE_S = 300;

/** What a badge says about one check: the fields of a check receipt it reads. */
export type BadgeCheck = {
  verdict: string;
  issued_at: string;
  /** `history.stable_for_days` of the receipt; null when the terms have no unbroken run yet. */
  stable_for_days: number | null;
};

export type BadgeState = {
  /** `pay` green, `stale` a pay check older than 72 h, `not_verified` no check or a latest check that is not pay. */
  state: 'pay' | 'stale' | 'not_verified';
  color: 'green' | 'grey';
  label: 'spotcheck';
  message: string;
  /** Seconds a cache may keep this badge: never past the moment a green badge turns grey. */
  max_age_s: number;
  /** When the shown check was made, or null without one. */
  checked_at: string | null;
};

/**
 * The badge for the latest public check of a host or path (`null`: never checked).
 * @example badgeState({ verdict: 'pay', issued_at: '2026-11-24T00:00:00Z', stable_for_days: 3 }, new Date('2026-11-24T01:00:00Z')).message // 'pay · stable 3 days'
 */
export function badgeState(latest: BadgeCheck | null, now: Date): BadgeState {
  const grey = (state: 'stale' | 'not_verified', message: string, checkedAt: string | null): BadgeState => ({
    state,
    color: 'grey',
    label: 'spotcheck',
    message,
    max_age_s: BADGE_GREY_MAX_AGE_S,
    checked_at: checkedAt,
  });
  if (latest === null) return grey('not_verified', 'not verified', null);
  const issued = Date.parse(latest.issued_at);
  if (latest.verdict !== 'pay' || !Number.isFinite(issued)) {
    return grey('not_verified', 'not verified', latest.issued_at);
  }
  const age = now.getTime() - issued;
  // A check from the future (clock skew) counts as fresh but is cached no longer than a fresh one would be.
  if (age >= BADGE_FRESH_MS) return grey('stale', 'stale', latest.issued_at);
  const days = Math.max(0, Math.floor(latest.stable_for_days ?? 0));
  const remainingS = Math.floor((BADGE_FRESH_MS - Math.max(0, age)) / 1000);
  return {
    state: 'pay',
    color: 'green',
    label: 'spotcheck',
    message: `pay · stable ${days} ${days === 1 ? 'day' : 'days'}`,
    max_age_s: Math.max(0, Math.min(BADGE_GREY_MAX_AGE_S, remainingS)),
    checked_at: latest.issued_at,
  };
}

/** The receipt members {@link latestPublicCheck} reads; anything else is ignored. */
export type CheckReceiptLike = Record<string, unknown>;

/**
 * The newest receipt that is a URL's public state (`core/public-state.ts`: never a dry run or a caller's own
 * expectation) among `receipts` (any order) for `host`, or for `host` and exact `path` (compared
 * without trailing slashes, query ignored). Receipts of other hosts are skipped, so callers may pass a superset.
 * @example latestPublicCheck(receipts, 'api.example', '/weather')?.verdict // 'pay'
 */
export function latestPublicCheck(
  receipts: readonly CheckReceiptLike[],
  host: string,
  path: string | null,
): BadgeCheck | null {
  const wantPath = path === null ? null : trimSlashes(path);
  let best: BadgeCheck | null = null;
  for (const receipt of receipts) {
    if (!isPublicState(receipt) || typeof receipt.url !== 'string') continue;
    const where = hostAndPath(receipt.url);
    if (where === null || where.host !== host) continue;
    if (wantPath !== null && where.path !== wantPath) continue;
    const check = badgeCheckOf(receipt);
    if (check !== null && (best === null || check.issued_at > best.issued_at)) best = check;
  }
  return best;
}

/**
 * What {@link latestPublicCheck} answers for every path of `host` among `receipts`, worked out in one pass and keyed
 * by {@link badgePathKey}: a badge server reads a host's receipts once and answers any `?path=` from the map, so a
 * path nobody checked costs a map lookup, not a read of the store.
 * @example latestPublicChecksByPath(receipts, 'api.example').get(badgePathKey('/weather/'))?.verdict // 'pay'
 */
export function latestPublicChecksByPath(
  receipts: readonly CheckReceiptLike[],
  host: string,
): Map<string, BadgeCheck> {
  const byPath = new Map<string, BadgeCheck>();
  for (const receipt of receipts) {
    if (!isPublicState(receipt) || typeof receipt.url !== 'string') continue;
    const where = hostAndPath(receipt.url);
    if (where === null || where.host !== host) continue;
    const check = badgeCheckOf(receipt);
    const best = byPath.get(where.path);
    if (check !== null && (best === undefined || check.issued_at > best.issued_at))
      byPath.set(where.path, check);
  }
  return byPath;
}

/** The key of `?path=` in {@link latestPublicChecksByPath}: the path as {@link latestPublicCheck} compares it. */
export function badgePathKey(path: string): string {
  return trimSlashes(path);
}

/** The badge fields of one receipt; null when it has no verdict or time. */
export function badgeCheckOf(receipt: CheckReceiptLike): BadgeCheck | null {
  const { verdict, issued_at: issuedAt } = receipt;
  if (typeof verdict !== 'string' || typeof issuedAt !== 'string') return null;
  const history = receipt.history as { stable_for_days?: unknown } | null | undefined;
  const days = history?.stable_for_days;
  return { verdict, issued_at: issuedAt, stable_for_days: typeof days === 'number' ? days : null };
}

/**
 * A badge host as written in `/badge/{host}.svg`: a lower-case DNS name or IP literal with an optional port.
 * Anything else is refused before a store or file is touched.
 */
export function isBadgeHost(value: string): boolean {
  return (
    value.length > 0 &&
    value.length <= 262 &&
    /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/.test(value)
  );
}

function hostAndPath(url: string): { host: string; path: string } | null {
  try {
    const parsed = new URL(url);
    return { host: parsed.host.toLowerCase(), path: trimSlashes(parsed.pathname) };
  } catch {
    return null;
  }
}

function trimSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

/** The Shields.io endpoint answer for a badge (https://shields.io/badges/endpoint-badge). */
export type ShieldsEndpoint = {
  schemaVersion: 1;
  label: string;
  message: string;
  color: 'brightgreen' | 'lightgrey';
  cacheSeconds: number;
};

/**
 * The badge as a Shields endpoint JSON, so a README can show it through shields.io as well.
 * @example shieldsEndpoint(badgeState(null, now)) // { schemaVersion: 1, label: 'spotcheck', message: 'not verified', color: 'lightgrey', cacheSeconds: 300 }
 */
export function shieldsEndpoint(state: BadgeState): ShieldsEndpoint {
  return {
    schemaVersion: 1,
    label: state.label,
    message: state.message,
    color: state.color === 'green' ? 'brightgreen' : 'lightgrey',
    // Shields refuses less than 300 s; a green badge near its end is cached at most that long.
    cacheSeconds: Math.max(300, state.max_age_s),
  };
}
