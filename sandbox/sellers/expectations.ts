/**
 * What docs/api.md §3.1 prescribes for one unpaid probe of each seller with default expectations
 * (expected network `eip155:8453`, no expected `pay_to`, no claimed price, no expiry check). Service tests
 * iterate over this table, so it is the fleet's contract; `variant` gives the one non-default call a seller
 * exists for, and `payment` the option a `pay` must approve.
 */
import type { Reason, Verdict } from '../../core/reasons.ts';
import {
  type Address,
  BASE,
  BASE_USDC_TOKEN,
  LISTING_WALLET,
  ONE_CENT,
  POLYGON,
  POLYGON_USDC_TOKEN,
} from './constants.ts';

/** Check parameters (docs/api.md §4 names) that turn a seller's default verdict into its `variant` verdict. */
export type VariantRequest = {
  claimed_price?: string;
  pay_to?: string;
  network?: string;
  check_expiry?: boolean;
  skew_s?: number;
};

/** The expected outcome of probing one seller. */
export type Expectation = {
  reason: Reason;
  verdict: Verdict;
  /** Only when the 402 came from POST after GET answered 405 (docs/api.md §2.3 `method_used`). */
  method?: 'GET' | 'POST';
  notes: string;
  /** For `pay`: the option that must be approved (never a hostile sibling). Absent when it varies by call. */
  payment?: ExpectedPayment;
  /** The same seller probed with these parameters instead of the defaults. */
  variant?: { request: VariantRequest; verdict: Verdict; reason: Reason; payment?: ExpectedPayment };
};

/** The payment a `pay` verdict must carry (docs/api.md §2.2), in atomic units. */
export type ExpectedPayment = { network: string; asset: string; amountAtomic: string; payTo: string };

const pay = (
  notes: string,
  payment: ExpectedPayment | null,
  more: Partial<Expectation> = {},
): Expectation => ({
  verdict: 'pay',
  reason: 'price_ok',
  notes,
  ...(payment ? { payment } : {}),
  ...more,
});
const skip = (reason: Reason, notes: string, more: Partial<Expectation> = {}): Expectation => ({
  verdict: 'skip',
  reason,
  notes,
  ...more,
});
const recheck = (reason: Reason, notes: string): Expectation => ({ verdict: 'recheck', reason, notes });

/** Builds the expectation table for a fleet whose honest sellers are paid to `payTo`. */
export function buildExpectations(payTo: Address) {
  const onBase = (amountAtomic = ONE_CENT, to: string = payTo): ExpectedPayment => ({
    network: BASE,
    asset: BASE_USDC_TOKEN.asset,
    amountAtomic,
    payTo: to,
  });
  const onPolygon: ExpectedPayment = {
    network: POLYGON,
    asset: POLYGON_USDC_TOKEN.asset,
    amountAtomic: ONE_CENT,
    payTo,
  };
  return {
    'sdk-ok': pay('SDK 402: v2 header, body {}; bazaar GET discovery declared.', onBase(), {
      variant: { request: { pay_to: payTo }, verdict: 'pay', reason: 'price_ok' },
    }),
    'sdk-post': pay(
      'SDK route "POST /x"; GET answers 405 (Allow: POST), so the prober retries POST.',
      onBase(),
      {
        method: 'POST',
      },
    ),
    'sdk-base-sepolia': skip(
      'network_unsupported',
      'SDK seller on eip155:84532 only; testnets are unsupported.',
    ),
    'sdk-expensive': pay('SDK seller at $0.50 (500000 atomic).', onBase('500000'), {
      variant: { request: { claimed_price: '0.01' }, verdict: 'skip', reason: 'price_mismatch' },
    }),
    'sdk-two-options': pay('SDK seller with a Base USDC option and a Polygon USDC option.', onBase(), {
      variant: { request: { network: POLYGON }, verdict: 'pay', reason: 'price_ok', payment: onPolygon },
    }),
    'v1-only': pay('v1 JSON body, network "base" (mapped to eip155:8453).', onBase()),
    'free-trial': recheck(
      'free_trial_active',
      'Valid 402 plus X-Free-Trial-Remaining: 3; the trial rule comes first. free_trial_remaining = 3.',
    ),
    'free-trial-unlimited': recheck(
      'free_trial_active',
      'Valid 402 plus X-Free-Trial: unlimited; a value that is no count still announces a trial. free_trial_remaining = null.',
    ),
    'no-paywall': skip('no_paywall', '200 JSON, no x402 terms.'),
    'server-error': recheck('server_error', '503 with Retry-After: 30.'),
    hang: recheck('timeout', 'TCP accepted and read, nothing ever written; the 5 s budget fires.'),
    reset: recheck('unreachable', 'TCP RST right after the request arrives.'),
    'broken-header': skip(
      'bad_challenge',
      '402 with a PAYMENT-REQUIRED that is not base64, and an empty body.',
    ),
    'broken-header-v1-body': pay(
      'Header is base64 of a bare accepts array (docs/x402.md §9.2); the v1 body is valid. Lenient: confidence medium.',
      onBase(),
    ),
    'v2-body-only': pay(
      'v2 object in the body, no header (docs/x402.md §9.1). Lenient: confidence medium.',
      onBase(),
    ),
    'post-only': pay('Hand-written: GET 405 (Allow: POST), POST 402 with a v2 header.', onBase(), {
      method: 'POST',
    }),
    'not-usdc': skip('asset_not_usdc', 'Base, but DAI (0x50c5…B0Cb) instead of USDC.'),
    'wrong-network': skip(
      'network_mismatch',
      'Polygon USDC only: a supported mainnet, not the expected one.',
      {
        variant: { request: { network: POLYGON }, verdict: 'pay', reason: 'price_ok', payment: onPolygon },
      },
    ),
    'testnet-only': skip('network_unsupported', 'v1 body on "base-sepolia" with Base Sepolia USDC.'),
    'hostile-first': pay(
      'First option: Base, look-alike USDC named "USD Coin", 1000 atomic, to ATTACKER_WALLET. Only the second (real USDC, fleet wallet) may be approved.',
      onBase(),
    ),
    'short-lived': pay(
      'validBefore = sent + 5 s (unix seconds string on the accept) and maxTimeoutSeconds 5.',
      onBase(),
      {
        variant: {
          request: { check_expiry: true, skew_s: 30 },
          verdict: 'skip',
          reason: 'challenge_expired',
        },
      },
    ),
    'wallet-rotates': pay(
      'payTo alternates between ROTATING_WALLETS on every request: a cached probe hides it for 5 min; two uncached checks give pay_to_changed = true.',
      null,
    ),
    'redirect-chain': pay(
      '302, 301, 307 (first Location absolute, then relative), then an honest 402.',
      onBase(),
    ),
    'redirect-too-long': recheck(
      'unreachable',
      'Four redirects before the 402; the prober follows at most 3 (detail too_many_redirects).',
    ),
    'redirect-private': skip(
      'ssrf_blocked',
      '302 to http://10.0.0.1/ (the sandbox allows loopback, never 10/8).',
    ),
    'huge-body': pay(
      'Valid header, then a 20 MiB chunked body: the prober must cap what it reads.',
      onBase(),
    ),
    'slow-drip': recheck(
      'timeout',
      'Status and valid header at once, body 1 byte/s for 30 s: the 5 s budget fires.',
    ),
    'big-header': pay(
      'Valid v2 header over 40 KB (long description): past Node’s 16 KB default header limit.',
      onBase(),
    ),
    'price-decimal': skip('bad_challenge', 'v1 body with maxAmountRequired "0.01": never guess units.'),
    'pay-to-listing': pay(
      'Honest, but pays LISTING_WALLET, not the fleet wallet.',
      onBase(ONE_CENT, LISTING_WALLET),
      {
        variant: { request: { pay_to: payTo }, verdict: 'skip', reason: 'pay_to_mismatch' },
      },
    ),
    'hidden-payee': skip(
      'bad_challenge',
      'Base USDC to the fleet wallet with a zero-width space appended: looks honest, cannot be signed.',
    ),
  } satisfies Record<string, Expectation>;
}

/** Every seller of the fleet. */
export type SellerName = keyof ReturnType<typeof buildExpectations>;
