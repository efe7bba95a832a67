/**
 * Which receipts are a URL's public state: what `/v1/receipts/by-url` answers, and what badges and listings built on
 * it show. The rule is docs/decisions.md "Public state of a URL", which the rules document quotes; this is its only
 * implementation.
 *
 * Anyone can check any URL, so a receipt counts only when nothing in it was chosen by the caller beyond the URL
 * itself: a live check (never a dry run) whose expectation came from the listing or from nowhere (never from the
 * request's `pay_to` or `network`), with no `claimed_price`, no expiry check (the caller picks its skew) and no
 * challenge of the caller's own (`payment_required`), and whose
 * probe was not answered 405 (a method the endpoint does not serve says nothing about the endpoint). The tier does
 * not matter: free, paid and exempt checks run the same code (docs/api.md §1).
 *
 * And it counts only for the one form of its endpoint it was requested in ({@link PublicForm}): a strict seller
 * answers 404 to a trailing slash or to a method it does not sell, so a check of such a variant says nothing about
 * the endpoint. {@link isPublicState} reads the receipt; the form is the stores' to match, since it depends on the
 * listings (`Store.latestReceiptByUrl`, `Store.publicChecksByHost`).
 */
import type { HttpMethod } from './model.ts';

/** A URL exactly as requested (`parseTargetUrl(…).url.href`, the index's `url`) and the method it was requested with. */
export type PublicForm = { url: string; method: HttpMethod };

/** The rule in words, for the rules document (`core/rules.ts`): each condition a receipt must meet. */
export const PUBLIC_STATE_RULE: readonly string[] = [
  'A URL’s public state (what /v1/receipts/by-url answers and badges and listings show) is its newest receipt that meets all of these:',
  'it is a live check, never a dry run;',
  'its expectation came from a listing or from nowhere, never from the caller’s pay_to or network;',
  'the caller sent no claimed_price;',
  'the caller asked no expiry check (the caller picks skew_s);',
  'the caller sent no challenge of its own (payment_required: anyone can send any challenge);',
  'its probe was not answered 405 (a method the endpoint does not serve says nothing about it);',
  'its requested URL and method are exactly the endpoint’s listed form, or, for an unlisted URL, exactly the URL and method by-url asks for (method GET unless given); on a host’s badge an unlisted URL counts only in the URL and method of its newest pay, and not at all before one: a variant (a trailing slash, another method, the query written otherwise) never changes a URL’s public state.',
  'Free, paid and exempt checks count alike; every receipt stays readable by id.',
];

/**
 * The form whose receipts are an endpoint's public state on by-url: its listed form when a listing names it, else
 * exactly the form asked.
 * @example publicFormOf(null, { url: 'https://a.example/x/', method: 'GET' }) // the same form
 */
export function publicFormOf(listing: Readonly<PublicForm> | null, asked: Readonly<PublicForm>): PublicForm {
  return listing === null ? { ...asked } : { url: listing.url, method: listing.method };
}

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
    // A check on a challenge the caller sent (`sent_challenge`) judged terms the caller chose.
    receipt.sent_challenge === undefined &&
    receipt.http_status !== 405
  );
}
