/**
 * Who may call each metered route and how (docs/api.md §1, §5, §7, §8), as data: the x402 offer a payment buys,
 * which service keys the route reads, its free tier and its dry runs. One function runs every policy
 * (`answerMetered`, `api/access-meter.ts`), so the order of the checks is the same on every route; the table is
 * tested whole (`test/integration/api/access-policies.test.ts`). A route added later declares its policy here.
 */
import { LIMITS, priceText } from '../core/limits.ts';
import type { AddressLimits } from './access.ts';
import type { OfferName } from './x402/offers.ts';

/**
 * How one route meters its calls.
 * - `keys`: `exempt-and-integrator` takes exempt keys and active integrator keys (hosted mode);
 *   `exempt` takes exempt keys and answers an integrator key 401; `ignored` reads no key: the call is sold like any
 *   other, whatever it presents.
 * - `free`: the free tier's quota bucket (journaled with every use, so its name never changes), its ceilings, and the
 *   words of the 402 once the day's uses are gone; null on a route that is always paid, where the 402 comes before
 *   the input is read.
 * - `dryRun`: the route's dry runs (free, never sold, never billed), their ceilings and the words of their 429.
 * - `bare`: the words of the 402 a free caller gets for a request that names nothing the route reads, before its
 *   input is checked; null where such a request is checked like any other.
 *
 * The order every policy shares: a key is read first (a 401 before anything else); a paid call's input is checked
 * after its payment is verified and before anything is settled; otherwise the input is checked before any quota,
 * credit or rate is taken, so a 400 is never metered.
 */
export type AccessPolicy = {
  offer: OfferName;
  keys: 'exempt-and-integrator' | 'exempt' | 'ignored';
  free: FreeTier | null;
  dryRun: DryRunTier | null;
  bare: string | null;
  /**
   * `invoice-line`: a hosted caller takes only its key's rate, never a metered use or the credit limit: the route
   * bills it on an invoice line of its own (watches: per watch-month, docs/decisions.md "Watches").
   */
  hostedBilling?: 'invoice-line';
};

/** A route's free tier. */
export type FreeTier = {
  bucket: 'check' | 'lookup' | 'payment_status';
  limits: AddressLimits;
  usedUp: string;
};

/** A route's dry runs: counted per caller too (by `ref`, else `client`, else address). */
export type DryRunTier = { limits: AddressLimits & { perCaller: number }; usedUp: string };

/** The policy of every metered route, by route. */
export const ACCESS_POLICIES = {
  /** `GET`/`POST /v1/products/endpoint-spot-check`. */
  check: {
    offer: 'check',
    keys: 'exempt-and-integrator',
    free: {
      bucket: 'check',
      limits: {
        perAddress: LIMITS.freeChecksPerDay,
        perNetwork: LIMITS.freeChecksPerNetwork,
        perSite: LIMITS.freeChecksPerSite,
      },
      usedUp: `Free checks for today are used up; this check costs ${priceText(LIMITS.checkPriceAtomic)}.`,
    },
    dryRun: {
      limits: {
        perCaller: LIMITS.dryRunsPerDay,
        perAddress: LIMITS.dryRunsPerAddress,
        perNetwork: LIMITS.dryRunsPerNetwork,
        perSite: LIMITS.dryRunsPerSite,
      },
      usedUp: `Dry runs are limited to ${LIMITS.dryRunsPerDay} per caller per UTC day, ${LIMITS.dryRunsPerAddress} per client address and ${LIMITS.dryRunsPerNetwork} per client network.`,
    },
    bare: null,
  },
  /** `GET /v1/lookup`: free, then paid here or at `/v1/lookup/paid`; integrators need no key. */
  lookup: {
    offer: 'lookup',
    keys: 'exempt',
    free: {
      bucket: 'lookup',
      limits: {
        perAddress: LIMITS.freeLookupsPerDay,
        perNetwork: LIMITS.freeLookupsPerNetwork,
        perSite: LIMITS.freeLookupsPerSite,
      },
      usedUp: `Free lookups for today are used up (${LIMITS.freeLookupsPerDay} per UTC day); a lookup costs ${priceText(LIMITS.lookupPriceAtomic)} at /v1/lookup/paid.`,
    },
    dryRun: null,
    bare: null,
  },
  /** `GET /v1/lookup/paid`: always paid; the 402 comes first, the input is checked before settlement. */
  lookupPaid: { offer: 'lookup', keys: 'ignored', free: null, dryRun: null, bare: null },
  /** `GET`/`POST /v1/products/payment-status`: a bare request is the way to ask for the price. */
  paymentStatus: {
    offer: 'payment-status',
    keys: 'exempt-and-integrator',
    free: {
      bucket: 'payment_status',
      limits: {
        perAddress: LIMITS.freePaymentStatusPerDay,
        perNetwork: LIMITS.freePaymentStatusPerNetwork,
        perSite: LIMITS.freePaymentStatusPerSite,
      },
      usedUp: `Free payment-status checks for today are used up; this check costs ${priceText(LIMITS.paymentStatusPriceAtomic)}.`,
    },
    dryRun: null,
    bare: `Send payment_payload, tx_hash, or from with nonce. A payment-status check costs ${priceText(LIMITS.paymentStatusPriceAtomic)}; ${LIMITS.freePaymentStatusPerDay} a day are free.`,
  },
  /**
   * `POST /v1/watches`: bought through x402 for a period, or made with an exempt key, or a hosted key (served before
   * the meter, billed per watch-month on the invoice).
   */
  watch: {
    offer: 'watch',
    keys: 'exempt-and-integrator',
    free: null,
    dryRun: null,
    bare: null,
    hostedBilling: 'invoice-line',
  },
  /** `GET`/`POST /v1/products/overnight-cos-pack`: always paid. */
  setupPack: { offer: 'setup-pack', keys: 'ignored', free: null, dryRun: null, bare: null },
} as const satisfies Record<string, AccessPolicy>;

/** The name of a metered route in {@link ACCESS_POLICIES}. */
export type MeteredRouteName = keyof typeof ACCESS_POLICIES;
