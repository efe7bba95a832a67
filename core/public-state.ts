/**
 * Which receipts are a URL's public state: what `/v1/receipts/by-url` answers, and what badges and listings built on
 * it show. The rule is docs/decisions.md "Public state of a URL", which the rules document quotes; this is its only
 * implementation.
 *
 * Anyone can check any URL, so a receipt counts only when nothing in it was chosen by the caller beyond the URL
 * itself: a live check (never a dry run) whose expectation came from the listing or from nowhere (never from the
 * request's `pay_to` or `network`), with no `claimed_price` and no expiry check (the caller picks its skew), and whose
 * probe was not answered 405 (a method the endpoint does not serve says nothing about the endpoint). The tier does
 * not matter: free, paid and exempt checks run the same code (spec §1).
 */

/** The rule in words, for the rules document (`core/rules.ts`): each condition a receipt must meet. */
export const PUBLIC_STATE_RULE: readonly string[] = [
  'A URL’s public state (what /v1/receipts/by-url answers and badges and listings show) is its newest receipt that meets all of these:',
  'it is a live check, never a dry run;',
  'its expectation came from a listing or from nowhere, never from the caller’s pay_to or network;',
  'the caller sent no claimed_price;',
  'the caller asked no expiry check (the caller picks skew_s);',
  'its probe was not answered 405 (a method the endpoint does not serve says nothing about it).',
  'Free, paid and exempt checks count alike; every receipt stays readable by id.',
];

/**
 * True when a signed receipt may stand as its URL's public state.
 *
 * @example isPublicState({ type: 'check', mode: 'dry-run', … }) // false: a dry run never is
 */
export function isPublicState(receipt: Readonly<Record<string, unknown>>): boolean {
  return (
    receipt.type === 'check' &&
    receipt.mode === 'live' &&
    (receipt.expected_source === 'listing' || receipt.expected_source === null) &&
    (receipt.claimed_price_usd === null || receipt.claimed_price_usd === undefined) &&
    receipt.expiry_check === undefined &&
    // A free or dry-run receipt keeps no expiry block, only that one was asked (api/check.ts).
    receipt.check_expiry !== true &&
    receipt.http_status !== 405
  );
}
