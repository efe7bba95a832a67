/**
 * The published limits of docs/api.md §8, in one place: the rules document and the README quote these.
 */
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
  historyKept: 30,
  /** Atomic USDC (6 decimals): USD 0.02. */
  checkPriceAtomic: '20000',
  lookupPriceAtomic: '20000',
  paymentStatusPriceAtomic: '20000',
  /** Atomic USDC: USD 9. */
  setupPackPriceAtomic: '9000000',
} as const;
