/**
 * The rules document (docs/api.md §4 `/rules.json`, docs/data-files.md): every reason code with its plain words and
 * verdict, the verdict rules in the order they are tried, the supported mainnets and their USDC, the confidence
 * rules, quality codes, free-trial headers, the reputation formula, hosted bands, the limits and how known answers
 * are judged. Built from the constants the checks themselves use, so it cannot drift from them. The API serves it;
 * each crawl run writes the copy its code produced.
 */
import { ALTERNATIVES_RULES } from './alternatives.ts';
import { atomicToUsdText } from './amount.ts';
import { CONFIDENCE_RULES } from './confidence.ts';
import { FREE_TRIAL_HEADERS, FREE_TRIAL_RULES } from './free-trial.ts';
import { HOSTED } from './hosted.ts';
import { KNOWN_ANSWER_RULES } from './known-answer.ts';
import { LIMITS, WATCH_LIMITS } from './limits.ts';
import { LISTING_DISPUTE_RULE } from './listing-dispute.ts';
import { listingNoteRules } from './listing-terms.ts';
import { supportedNetworks } from './networks.ts';
import { POLITENESS_RULES } from './politeness.ts';
import { probeStateRules } from './probe-state.ts';
import { PUBLIC_STATE_RULE } from './public-state.ts';
import { QUALITY_CODES, REASONS, type Reason, reasonText, type Verdict } from './reasons.ts';
import { REPUTATION_FORMULA } from './reputation.ts';
import { CRAWL_METHOD, DEDUPE_RULE, SKIP_PAGE_SIZE } from './skip-listing.ts';

/** docs/api.md §9: the API description version. */
export const API_VERSION = '0.44.0';

/** The verdict each reason code comes with (docs/api.md §3.1). */
export const REASON_VERDICT: Record<Reason, Verdict> = {
  price_ok: 'pay',
  price_below_listing: 'pay',
  price_mismatch: 'skip',
  network_mismatch: 'skip',
  pay_to_mismatch: 'skip',
  asset_not_usdc: 'skip',
  network_unsupported: 'skip',
  no_paywall: 'skip',
  free_trial_active: 'recheck',
  timeout: 'recheck',
  unreachable: 'recheck',
  server_error: 'recheck',
  bad_challenge: 'skip',
  ssrf_blocked: 'skip',
  challenge_expired: 'skip',
  challenge_mismatch: 'skip',
};

/** docs/api.md §3.1, in the order the rules are tried. */
const VERDICT_RULES: ReadonlyArray<{ reason_codes: Reason[]; rule: string }> = [
  {
    reason_codes: ['ssrf_blocked'],
    rule: 'The target address is refused by the forgery gate: it is not contacted.',
  },
  {
    reason_codes: ['timeout', 'server_error', 'unreachable'],
    rule: 'No answer within 5 s, a 5xx answer, or DNS, connection or TLS failure.',
  },
  {
    reason_codes: ['free_trial_active'],
    rule: 'The answer carries a recognized free-trial header that does not say the trial is over (a count of 0, nothing left, used, or a no flag). A value that cannot be read (unlimited, n/a, empty) still announces a trial: free_trial_remaining is null, and is the count only when it parses as a whole number.',
  },
  {
    reason_codes: ['no_paywall'],
    rule: 'No 402, or a 402 with neither a PAYMENT-REQUIRED header nor an x402 body.',
  },
  {
    reason_codes: ['bad_challenge'],
    rule: 'The 402 terms cannot be decoded or validated; amounts must be atomic integer strings (units are never guessed).',
  },
  {
    reason_codes: ['network_unsupported', 'network_mismatch'],
    rule: 'No option on a supported mainnet; or none on the expected network (the caller’s, else the listing’s, else Base).',
  },
  {
    reason_codes: ['asset_not_usdc'],
    rule: 'On the expected network, no option in that network’s canonical USDC.',
  },
  {
    reason_codes: ['pay_to_mismatch'],
    rule: 'The wallet asked differs from the expected one (the caller’s, else the listing’s).',
  },
  {
    reason_codes: ['price_mismatch'],
    rule: 'The quoted price is above the caller’s claimed price or the listing’s price.',
  },
  {
    reason_codes: ['challenge_expired'],
    rule: 'Expiry check asked, and the option to pay expires within skew_s seconds.',
  },
  {
    reason_codes: ['challenge_mismatch'],
    rule: 'A received challenge was sent (payment_required) and the live terms pass every rule above: the requirement to sign (selected_requirement, else the one these rules choose from the sent challenge) fails one of rules 6 to 10, or its network, asset, amount or pay_to are not among the options the live probe shows.',
  },
  {
    reason_codes: ['price_below_listing', 'price_ok'],
    rule: 'Otherwise pay: price_below_listing when the quote is below the listing’s price, else price_ok.',
  },
];

const QUALITY_TEXT: Record<(typeof QUALITY_CODES)[number], string> = {
  quality_ok: 'A v2 402 that the official SDK client accepts as it is.',
  quality_unverified: 'A v1-only 402: current SDK clients cannot be shown to pay it.',
  quality_bad_content_type: 'No content type, or a non-JSON one while the body carries the terms.',
  quality_schema_mismatch:
    'Terms missing, invalid, decoded only leniently, or failing the SDK’s strict schema.',
  quality_bad_status: 'The answer was not a 402.',
  quality_unreachable: 'No answer: blocked, timed out or unreachable.',
};

/** Hosted bands per integrator and UTC month (docs/api.md §5.4; docs/api.md §8), from the numbers metering uses. */
const HOSTED_BANDS = [
  { band: 'free_allowance', from_check: 1, to_check: HOSTED.freeAllowance, price: 0n },
  {
    band: 'standard',
    from_check: HOSTED.freeAllowance + 1,
    to_check: HOSTED.standardUpTo,
    price: HOSTED.standardPriceAtomic,
  },
  { band: 'volume', from_check: HOSTED.standardUpTo + 1, to_check: null, price: HOSTED.volumePriceAtomic },
].map(({ price, ...band }) => ({
  ...band,
  price_atomic: price.toString(),
  price_usd: Number(atomicToUsdText(price.toString())),
}));

/**
 * The rules document.
 * @example rulesDocument().reasons.length // every reason code
 */
export function rulesDocument() {
  return {
    schema: 1,
    api_version: API_VERSION,
    verdict_rules: VERDICT_RULES.map((r, i) => ({
      order: i + 1,
      reason_codes: r.reason_codes,
      verdict: [...new Set(r.reason_codes.map((code) => REASON_VERDICT[code]))].join(' or '),
      rule: r.rule,
    })),
    reasons: REASONS.map((code) => ({ code, verdict: REASON_VERDICT[code], text: reasonText(code) })),
    // The "supported mainnet" of the verdict rules: an option elsewhere is `network_unsupported`.
    supported_networks: supportedNetworks().map(({ network, asset, name, version, decimals }) => ({
      network,
      usdc: asset,
      name,
      version,
      decimals,
    })),
    confidence: CONFIDENCE_RULES,
    quality_codes: QUALITY_CODES.map((code) => ({ code, text: QUALITY_TEXT[code] })),
    free_trial_headers: FREE_TRIAL_HEADERS.map((header) => ({ header, meaning: FREE_TRIAL_RULES[header] })),
    reputation: REPUTATION_FORMULA,
    hosted_bands: HOSTED_BANDS,
    limits: snakeKeys({
      ...LIMITS,
      hostedChecksPerMinutePerKey: HOSTED.ratePerMinute,
      skipPageSize: SKIP_PAGE_SIZE,
      crawlTimeoutMs: 5000,
      crawlInFlightPerHost: 3,
      // crawl/run.ts PER_DOMAIN and io/probe/address-slots.ts MAX_IN_FLIGHT_PER_ADDRESS (test/unit/core/crawl-files.test.ts
      // holds them equal); why these figures: docs/decisions.md "The crawl" and "The probe".
      crawlInFlightPerDomain: 12,
      probeInFlightPerAddress: 32,
    }),
    dedupe: DEDUPE_RULE,
    crawl_method: CRAWL_METHOD,
    public_state: PUBLIC_STATE_RULE,
    listing_disputes: LISTING_DISPUTE_RULE,
    // Why a listing never reached its paywall, why its terms give no price, and how the crawl stays welcome.
    probe_states: probeStateRules(),
    listing_notes: listingNoteRules(),
    politeness: POLITENESS_RULES,
    known_answers: KNOWN_ANSWER_RULES,
    // Which services a skip of a check naming a task offers instead (docs/api.md §2.1 `alternatives`).
    alternatives: ALTERNATIVES_RULES,
    // Watches (docs/api.md §6): price and period, probe interval, when an endpoint is down, webhook retries.
    watches: {
      ...snakeKeys(WATCH_LIMITS),
      price_usd: Number(atomicToUsdText(WATCH_LIMITS.priceAtomic)),
      public_state:
        'A watch probe is a live check: one whose watch names no pay_to, network or claimed_price counts toward the URL’s public state like a crawl probe; one with expectations does not. A probe whose terms and verdict did not change writes no receipt.',
    },
  };
}

/** Wire documents keep the spec's snake_case: `freeChecksPerDay` → `free_checks_per_day`. */
function snakeKeys(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [
      key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      value,
    ]),
  );
}
