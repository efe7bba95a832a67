/**
 * The guard's options and the events it reports. Everything with a side effect (the HTTP client used to reach
 * Spotcheck, the clock, waiting) is an option, so tests replace it and nothing else.
 */

/** What the caller expects of every payment the guard lets through (sent to Spotcheck with each check). */
export type GuardExpectations = {
  /** The wallet the seller must be paid into (`pay_to` of the check). */
  payTo?: string;
  /** The network the payment must be on, CAIP-2 (`eip155:8453`) or a v1 name (`base`). */
  network?: string;
  /** The most the caller will pay, in USD as decimal text (`"0.05"`): the check's `claimed_price`. */
  maxPriceUsd?: string;
};

/** Options of {@link attachGuard}. Only `service` is required. */
export type GuardOptions = {
  /** Spotcheck's origin, e.g. `https://spotcheck.example`. */
  service: string;
  /** A hosted integrator key (or an exempt key), sent as `Authorization: Bearer <key>`: the check is billed as hosted. */
  key?: string;
  /** Opaque id of the agent the integrator checks for (`x-service-end-user`); only with `key`. */
  endUser?: string;
  /** The caller's expectations (wallet, network, maximum price). */
  expect?: GuardExpectations;
  /**
   * The check's expiry rule: the requirement to sign must not expire within this many seconds (`check_expiry=1`,
   * `skew_s`; 0 to 300, default 30), since the client signs right after the check. `false` leaves expiry unchecked.
   */
  expirySkewS?: number | false;
  /** How long one call to Spotcheck may take, in ms (default 5000; a probe of a slow seller takes up to 5 s). */
  timeoutMs?: number;
  /**
   * What happens when Spotcheck gives no usable answer (unreachable, timeout, 5xx, 401, 402, 429, a body that is
   * not a check answer): `closed` (default) aborts the payment; `open` lets it be signed and reports an
   * `undecided` event with `paid: true`. A verdict other than `pay` always aborts, in both modes.
   */
  failureMode?: 'closed' | 'open';
  /** Receives every decision the guard takes (synchronously; an exception thrown here is ignored). */
  onEvent?: (event: GuardEvent) => void;
  /**
   * How long a new payment may wait for an earlier payment of the same URL that is still pending (ms, default 0:
   * do not wait, abort). The guard waits until the `wait_until` payment status gives and asks again, never longer.
   */
  pendingWaitMs?: number;
  /** The `fetch` used to reach Spotcheck (default `globalThis.fetch`); a paying fetch pays Spotcheck past its free quota. */
  fetch?: typeof fetch;
  /** Clock in ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** Waits `ms` (default a timer). */
  sleep?: (ms: number) => Promise<void>;
};

/** Where the guard's reasons come from. */
export type GuardEvent =
  | {
      type: 'approved';
      url: string;
      method: string;
      termsSha256: string;
      /** The receipt of the check that approved it (null when reused from an earlier check of the same terms). */
      receiptUrl: string | null;
      reused: boolean;
    }
  | {
      type: 'refused';
      url: string;
      method: string;
      /** Spotcheck's reason code (`pay_to_mismatch`, `challenge_mismatch`, …), a 400 code, or `terms_hash_mismatch`. */
      reason: string;
      verdict: string | null;
      receiptUrl: string | null;
    }
  | {
      type: 'undecided';
      url: string;
      method: string;
      /** Why no verdict came back (`timeout`, `unreachable`, `http_503`, `bad_answer`, …). */
      cause: string;
      failureMode: 'closed' | 'open';
      /** True when the payment was let through (open mode). */
      paid: boolean;
    }
  | {
      type: 'outcome_unknown';
      url: string;
      /** Why the outcome of the payment is unknown (`transport_error`, `settle_failed`, `no_settlement`). */
      cause: string;
    }
  | {
      type: 'resign';
      url: string;
      /** What payment status said of the earlier payment, or `status_unavailable`. */
      status: string;
      /** True when a new signature was allowed. */
      allowed: boolean;
      /** The payment-status answer, as Spotcheck sent it (null when none came). */
      answer: PaymentStatusAnswer | null;
    };

/** The members of Spotcheck's payment-status answer the guard reads (docs/api.md §2.7 of Spotcheck). */
export type PaymentStatusAnswer = {
  status: string;
  reason?: string;
  safe_to_resign: boolean;
  wait_until?: string | null;
  tx?: { hash?: string } | null;
  receipt_url?: string;
  [member: string]: unknown;
};
