/**
 * The published limits of docs/api.md §8, in one place: the rules document and the README quote these, and every
 * answer or description that names a price renders it from here ({@link priceText}).
 */
import { atomicToUsdText } from './amount.ts';

/** Quotas, reuse and history figures, and the prices in atomic USDC, as docs/api.md §8 states them. */
export const LIMITS = {
  freeChecksPerDay: 5,
  /** Free checks from one client network (IPv4 /24, IPv6 /64) per UTC day. */
  freeChecksPerNetwork: 25,
  /** Free checks from one IPv6 /48 (what one holder is commonly assigned) per UTC day. */
  freeChecksPerSite: 50,
  freeLookupsPerDay: 5,
  freeLookupsPerNetwork: 25,
  freeLookupsPerSite: 50,
  freePaymentStatusPerDay: 5,
  freePaymentStatusPerNetwork: 25,
  freePaymentStatusPerSite: 50,
  dryRunsPerDay: 50,
  /** Dry runs from one client address per UTC day, whatever `ref` it sends: the spec counts dry runs per caller
   *  (`ref`, else `client`, else address), and a caller can name a new `ref` for every call. */
  dryRunsPerAddress: 200,
  dryRunsPerNetwork: 500,
  dryRunsPerSite: 1000,
  probeReuseSeconds: 300,
  /** Observations kept per endpoint: the check's `history` and every store's observation reads. */
  historyKept: 30,
  /** Atomic USDC (6 decimals): USD 0.02. */
  checkPriceAtomic: '20000',
  lookupPriceAtomic: '20000',
  paymentStatusPriceAtomic: '20000',
  /** Atomic USDC: USD 9. */
  setupPackPriceAtomic: '9000000',
} as const;

/**
 * Watches (docs/api.md "Watches"; docs/decisions.md "Watches"): what one costs and for how long, how often its
 * endpoint is probed, when it counts as down, and how long a webhook is retried.
 */
export const WATCH_LIMITS = {
  /** Atomic USDC: USD 1 buys one watch for `periodDays`. */
  priceAtomic: '1000000',
  periodDays: 30,
  /**
   * Atomic USDC: USD 0.50 per watch-month of a watch made with a hosted key, billed on the monthly invoice for each
   * calendar month its active span overlaps. A 30-day watch nearly always overlaps two months, so it costs about
   * what the same watch costs through x402, never more (docs/decisions.md "Watches").
   */
  watchMonthAtomic: '500000',
  /** Default probe interval (`WATCH_INTERVAL_S`). */
  intervalSeconds: 600,
  /** Consecutive failed probes before `down`. */
  downAfter: 3,
  /** `watch_expiring` is sent this long before a watch ends. */
  expiringNoticeHours: 72,
  /** Webhook retries: first delay, longest delay, and how long they go on before the watch is paused. */
  retryBaseSeconds: 10,
  retryCapSeconds: 3600,
  retryHours: 24,
  /** Deliveries in flight to one receiver host at once. */
  deliveriesPerReceiver: 4,
  /** Probes in flight to one host at once, as in the crawl. */
  probesPerHost: 3,
} as const;

/**
 * A price as the service writes it for people, from its atomic USDC amount.
 * @example priceText(LIMITS.checkPriceAtomic) // 'USD 0.02'; priceText(LIMITS.setupPackPriceAtomic) // 'USD 9'
 */
export function priceText(atomic: string): string {
  return `USD ${atomicToUsdText(atomic)}`;
}
