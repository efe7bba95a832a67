/**
 * Verdict reason codes (docs/api.md §2.1, §3.1). Published in receipts and the rules document: never rename one.
 *
 * The `reason_code` of an answer is the same snake_case code as `reason`; the free tier answers `reason` in
 * plain words (see {@link reasonText}) and keeps the code in `reason_code`.
 */
export const REASONS = [
  'price_ok',
  'price_below_listing',
  'price_mismatch',
  'network_mismatch',
  'pay_to_mismatch',
  'asset_not_usdc',
  'network_unsupported',
  'no_paywall',
  'free_trial_active',
  'timeout',
  'unreachable',
  'server_error',
  'bad_challenge',
  'ssrf_blocked',
  'challenge_expired',
  'challenge_mismatch',
] as const;

export type Reason = (typeof REASONS)[number];

export type Verdict = 'pay' | 'skip' | 'recheck';

const TEXT: Record<Reason, string> = {
  price_ok: 'The live payment terms match what was expected and the price is acceptable.',
  price_below_listing: 'The live price is below the listed price; the terms otherwise match.',
  price_mismatch: 'The live price is above the claimed or listed price.',
  network_mismatch: 'No payment option is on the expected network.',
  pay_to_mismatch: 'The wallet asked for differs from the expected wallet.',
  asset_not_usdc: "No payment option uses the network's canonical USDC contract.",
  network_unsupported: 'No payment option is on a supported mainnet.',
  no_paywall: 'The endpoint did not answer with x402 payment terms.',
  free_trial_active: 'The endpoint reports an active free trial; check again when it ends.',
  timeout: 'The endpoint did not answer within the time budget.',
  unreachable: 'The endpoint could not be reached (DNS, refused or reset connection, TLS).',
  server_error: 'The endpoint answered with a server error (5xx).',
  bad_challenge: 'The 402 payment terms could not be decoded or validated.',
  ssrf_blocked: 'The target address is not a public internet address; it was not contacted.',
  challenge_expired: 'Every Base USDC payment option expires within the allowed skew.',
  challenge_mismatch:
    'The payment requirement you received fails a rule, or differs from the terms the endpoint shows Spotcheck now.',
};

/** Plain words for a reason code, as the free tier shows them. */
export function reasonText(reason: Reason): string {
  return TEXT[reason];
}

export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && (REASONS as readonly string[]).includes(value);
}

/** Quality codes of the unpaid 402 (docs/api.md §2.1 `quality.code`). Metadata only: never changes a verdict. */
export const QUALITY_CODES = [
  'quality_ok',
  'quality_unverified',
  'quality_bad_content_type',
  'quality_schema_mismatch',
  'quality_bad_status',
  'quality_unreachable',
] as const;

export type QualityCode = (typeof QUALITY_CODES)[number];
