/**
 * The rules document (spec §4 `/rules` and `/rules.json`, design.md "Filling the gaps"): every verdict reason code
 * with its verdict and plain words, the confidence rules, the quality codes, the free-trial headers recognized, the
 * reputation formula and the limits, built from the very constants the checks use. One source: the MCP `get_rules`
 * tool serves it today, and the `/rules.json` file and page are meant to serve this same function (extend it
 * here, never copy it).
 */
import { CONFIDENCE_RULES } from './confidence.ts';
import { FREE_TRIAL_HEADERS, FREE_TRIAL_RULES } from './free-trial.ts';
import { LIMITS } from './limits.ts';
import {
  QUALITY_CODES,
  type QualityCode,
  REASONS,
  type Reason,
  reasonText,
  type Verdict,
} from './reasons.ts';
import { REPUTATION_FORMULA } from './reputation.ts';

/** Spec §9: the API description version. */
export const API_VERSION = '0.42.1';

/** The verdict each reason code comes with (`core/verdict.ts` decides; spec §3.1 and design.md rules 1–11). */
export const REASON_VERDICT: Record<Reason, Verdict> = {
  price_ok: 'pay',
  price_below_listing: 'pay',
  free_trial_active: 'recheck',
  timeout: 'recheck',
  unreachable: 'recheck',
  server_error: 'recheck',
  price_mismatch: 'skip',
  network_mismatch: 'skip',
  pay_to_mismatch: 'skip',
  asset_not_usdc: 'skip',
  network_unsupported: 'skip',
  no_paywall: 'skip',
  bad_challenge: 'skip',
  ssrf_blocked: 'skip',
  challenge_expired: 'skip',
};

/** Plain words of the quality codes (`core/quality.ts` decides, in this order of its rules). */
const QUALITY_TEXT: Record<QualityCode, string> = {
  quality_unreachable: 'No answer came (blocked address, timeout, unreachable).',
  quality_bad_status: 'The endpoint answered with a status other than 402.',
  quality_bad_content_type: 'The 402 had no usable PAYMENT-REQUIRED header and its body was not JSON.',
  quality_schema_mismatch:
    'The payment terms needed a lenient decode or fail the official x402 SDK schema, so SDK clients may not pay them.',
  quality_unverified: 'Only an x402 v1 challenge: current SDK clients cannot be shown to pay it.',
  quality_ok: 'A clean x402 v2 challenge the official SDK client can pay.',
};

/** The rules document. */
export function rulesDocument() {
  return {
    schema: 1,
    api_version: API_VERSION,
    reasons: REASONS.map((code) => ({ code, verdict: REASON_VERDICT[code], text: reasonText(code) })),
    confidence: CONFIDENCE_RULES.map(({ confidence, rule }) => ({ confidence, rule })),
    quality_codes: QUALITY_CODES.map((code) => ({ code, text: QUALITY_TEXT[code] })),
    free_trial_headers: FREE_TRIAL_HEADERS.map((header) => ({ header, meaning: FREE_TRIAL_RULES[header] })),
    reputation: REPUTATION_FORMULA,
    limits: {
      free_checks_per_day: LIMITS.freeChecksPerDay,
      free_checks_per_network: LIMITS.freeChecksPerNetwork,
      free_lookups_per_day: LIMITS.freeLookupsPerDay,
      free_payment_status_per_day: LIMITS.freePaymentStatusPerDay,
      dry_runs_per_day: LIMITS.dryRunsPerDay,
      dry_runs_per_address: LIMITS.dryRunsPerAddress,
      probe_reuse_seconds: LIMITS.probeReuseSeconds,
      history_kept: LIMITS.historyKept,
      check_price_atomic: LIMITS.checkPriceAtomic,
      lookup_price_atomic: LIMITS.lookupPriceAtomic,
      payment_status_price_atomic: LIMITS.paymentStatusPriceAtomic,
      setup_pack_price_atomic: LIMITS.setupPackPriceAtomic,
    },
  };
}

/** The rules document's type, for its published schema and its readers. */
export type RulesDocument = ReturnType<typeof rulesDocument>;
