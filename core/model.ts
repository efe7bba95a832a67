/**
 * Domain types shared by more than one core module. Plain data only: no behaviour, no I/O.
 *
 * Naming (CONTRIBUTING "Conventions"): a type that is published JSON as it stands (a receipt or answer member of
 * docs/api.md: {@link Observation}, {@link HistorySummary}, {@link ExpiryCheck}) keeps the wire's snake_case
 * member names, so it goes out without a mapping that could change a receipt's bytes; every other type is
 * camelCase, including the normalized x402 objects ({@link Accept}), whose protocol names are camelCase.
 */
import type { Reason, Verdict } from './reasons.ts';

export type HttpMethod = 'GET' | 'POST';

/** One payment option of a challenge, normalized from v1 or v2 (docs/x402.md §2.2, §2.6 step 4). */
export type Accept = {
  scheme: string;
  /** CAIP-2 (`eip155:8453`); v1 names such as `base` are mapped, unknown names kept as sent. */
  network: string;
  /** Atomic units: a string of decimal digits, validated. Never a float. */
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number | null;
  /** Unix seconds of the option's own expiry, where the seller states one (`validBefore`, `expiresAt`). */
  validBefore: number | null;
  extra: Record<string, unknown> | null;
};

/** A decoded x402 payment challenge. */
export type Challenge = {
  version: 1 | 2;
  /** Where the accepted object came from. */
  source: 'header' | 'body';
  /** True when decoding needed leniency: a base64url/whitespace fix, a broken header beside a valid v1 body,
   *  or a v2 object in the body only. Lowers confidence. */
  lenient: boolean;
  accepts: Accept[];
  resource: { url: string | null; description: string | null; mimeType: string | null } | null;
  /** Machine-readable notes on what leniency was applied, e.g. `header_base64url`, `v2_body_only`. */
  notes: string[];
};

/** Why a value failed a schema, valibot-style: where, what was expected, what arrived. */
export type Issue = { path: string; expected: string; received: string; message: string };

export type ChallengeResult =
  | { ok: true; value: Challenge }
  /** No x402 terms at all: not a 402, or a 402 with neither header nor x402 body. */
  | { ok: false; kind: 'absent' }
  /** x402 terms are present but cannot be decoded or validated. */
  | { ok: false; kind: 'invalid'; issues: Issue[] };

/** The raw answer of one unpaid probe, as the prober saw it. Header names are lower-case. */
export type ProbeResponse = {
  status: number;
  headers: Record<string, string>;
  /** UTF-8 text of the body up to the cap; null when empty. */
  body: string | null;
  bodyTruncated: boolean;
  methodUsed: HttpMethod;
  finalUrl: string;
  redirects: number;
};

/** What one unpaid probe produced. Failures of the target are values, not exceptions. */
export type ProbeOutcome =
  | { kind: 'response'; response: ProbeResponse; probedAt: string; elapsedMs: number }
  | { kind: 'blocked'; detail: string; probedAt: string; elapsedMs: number }
  | { kind: 'timeout'; detail: string; probedAt: string; elapsedMs: number }
  | { kind: 'unreachable'; detail: string; probedAt: string; elapsedMs: number };

/** A catalog listing of an endpoint: what some source claims the endpoint charges. */
export type Listing = {
  url: string;
  method: HttpMethod;
  priceUsd: number | null;
  network: string | null;
  asset: string | null;
  payTo: string | null;
  source: string;
};

/** One observation of an endpoint's live terms; published as is (docs/api.md §2.1 `history_observations`). */
export type Observation = {
  observed_at: string;
  http_status: number | null;
  price_usd: number | null;
  amount_atomic: string | null;
  network: string | null;
  asset: string | null;
  pay_to: string | null;
};

/** The summary of an endpoint's observations; published as is (docs/api.md §2.1 `history`). */
export type HistorySummary = {
  observations: number;
  stable_for_days: number | null;
  stable_since: string | null;
  last_changed: string | null;
  drift: boolean | null;
};

/** What the caller expects, from the request (docs/api.md §4 endpoint-spot-check parameters). */
export type CheckRequest = {
  url: string;
  method: HttpMethod;
  /** Decimal string of the USD price the caller was told, exactly as sent (never a float). */
  claimedPrice: string | null;
  payTo: string | null;
  network: string | null;
  checkExpiry: boolean;
  skewS: number;
};

/** The expiry check of a challenge; published as is (docs/api.md §2.1 `expiry_check`). */
export type ExpiryCheck = {
  checked_at: string;
  skew_s: number;
  options_considered: number;
  /** The latest expiry among Base USDC options, ISO; null when there were none. */
  latest_expiry: string | null;
  expiry_source: 'validBefore' | 'maxTimeoutSeconds' | 'default_60s' | null;
  expired: boolean;
};

/** The pure decision over one probe (docs/api.md §3.1). */
export type Decision = {
  verdict: Verdict;
  reason: Reason;
  /** The option the decision is about: on the expected network in canonical USDC, else the first option. */
  option: Accept | null;
  challenge: Challenge | null;
  freeTrialRemaining: number | null;
  expectedPayTo: string | null;
  expectedNetwork: string | null;
  expectedSource: 'request' | 'listing' | null;
  expiry: ExpiryCheck | null;
};
