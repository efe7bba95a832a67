/**
 * Hand-written sellers (plain `node:http`) whose 402 differs from what the SDK emits: v1 bodies, broken or
 * misplaced headers, wrong assets and networks, hostile option order, short expiries, rotating wallets.
 * Each answers the same way on any path and method unless its comment says otherwise.
 */
import type { RequestListener } from 'node:http';
import {
  ATTACKER_WALLET,
  BASE,
  BASE_DAI,
  BASE_SEPOLIA_USDC_TOKEN,
  BASE_USDC_TOKEN,
  LISTING_WALLET,
  LOOKALIKE_USDC,
  POLYGON,
  POLYGON_USDC_TOKEN,
  ROTATING_WALLETS,
} from './constants.ts';
import type { SellerOptions } from './types.ts';
import {
  base64Json,
  requestUrl,
  send,
  sendJson,
  sendV1,
  sendV2,
  v1Accept,
  v1Required,
  v2Accept,
  v2Required,
} from './wire.ts';

type Factory = (ctx: SellerOptions) => RequestListener;

/** An honest v2 402 on Base USDC to `payTo`, with optional extra response headers. */
const honestV2 =
  (headers: Record<string, string> = {}): Factory =>
  ({ payTo }) =>
  (req, res) =>
    sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, payTo)]), headers);

/** Fixed size of the `big-header` description: its base64 header lands well past 40 KB. */
export const BIG_DESCRIPTION_CHARS = 36_000;

/** The hand-written challenge sellers, by fleet name. */
export const handwritten = {
  'v1-only':
    ({ payTo }) =>
    (req, res) =>
      sendV1(res, v1Required([v1Accept(requestUrl(req), 'base', BASE_USDC_TOKEN, payTo)])),

  // No x402 convention exists for trials (docs/x402.md §7); this is the header docs/api.md §3.1 recognizes first.
  'free-trial': honestV2({ 'x-free-trial-remaining': '3' }),

  // A trial header whose value is no count: still a trial announced, its count unknown.
  'free-trial-unlimited': honestV2({ 'x-free-trial': 'unlimited' }),

  'no-paywall': () => (_req, res) => sendJson(res, 200, { ok: true, data: { temperature: 21, unit: 'C' } }),

  'server-error': () => (_req, res) =>
    sendJson(res, 503, { error: 'upstream unavailable' }, { 'retry-after': '30' }),

  // Not base64 at all (the SDK's decoder rejects it by regex), and no body to fall back on.
  'broken-header': () => (_req, res) =>
    send(res, 402, { 'payment-required': '%%not-base64: {x402Version:2}%%', 'cache-control': 'no-store' }),

  // The bug of docs/x402.md §9.2: the header is base64 of a bare accepts array; the v1 body is fine.
  'broken-header-v1-body':
    ({ payTo }) =>
    (req, res) => {
      const accepts = [v1Accept(requestUrl(req), 'base', BASE_USDC_TOKEN, payTo)];
      sendV1(res, v1Required(accepts), { 'payment-required': base64Json(accepts) });
    },

  // docs/x402.md §9.1: a v2 object in the body only; the official client cannot pay it, a lenient reader can.
  'v2-body-only':
    ({ payTo }) =>
    (req, res) =>
      sendJson(res, 402, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, payTo)])),

  // docs/x402.md §9.6: GET answers 405, the paid route is POST.
  'post-only':
    ({ payTo }) =>
    (req, res) => {
      if (req.method !== 'POST')
        return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
      sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, payTo)]));
    },

  'not-usdc':
    ({ payTo }) =>
    (req, res) =>
      sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_DAI, payTo, '10000000000000000')])),

  'wrong-network':
    ({ payTo }) =>
    (req, res) =>
      sendV2(res, v2Required(requestUrl(req), [v2Accept(POLYGON, POLYGON_USDC_TOKEN, payTo)])),

  'testnet-only':
    ({ payTo }) =>
    (req, res) =>
      sendV1(res, v1Required([v1Accept(requestUrl(req), 'base-sepolia', BASE_SEPOLIA_USDC_TOKEN, payTo)])),

  // The first option is cheaper, on Base, named "USD Coin", and pays an attacker with a look-alike token.
  'hostile-first':
    ({ payTo }) =>
    (req, res) =>
      sendV2(
        res,
        v2Required(requestUrl(req), [
          v2Accept(BASE, LOOKALIKE_USDC, ATTACKER_WALLET, '1000'),
          v2Accept(BASE, BASE_USDC_TOKEN, payTo),
        ]),
      ),

  // Expires 5 s after it is sent, both as its own validBefore and as maxTimeoutSeconds.
  'short-lived':
    ({ payTo }) =>
    (req, res) => {
      const accept = { ...v2Accept(BASE, BASE_USDC_TOKEN, payTo), maxTimeoutSeconds: 5 };
      accept.validBefore = String(Math.floor(Date.now() / 1000) + 5);
      sendV2(res, v2Required(requestUrl(req), [accept]));
    },

  'wallet-rotates': () => {
    let calls = 0;
    return (req, res) => {
      const wallet = ROTATING_WALLETS[calls++ % 2]!;
      sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, wallet)]));
    };
  },

  // docs/x402.md §9.18: bazaar schemas and descriptions inflate the header past Node's 16 KB default.
  'big-header':
    ({ payTo }) =>
    (req, res) => {
      const description =
        `Sandbox resource with a very long description. ${'lorem ipsum '.repeat(3000)}`.slice(
          0,
          BIG_DESCRIPTION_CHARS,
        );
      sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, payTo)], description));
    },

  // docs/x402.md §9.9: a decimal USD amount where atomic units belong.
  'price-decimal':
    ({ payTo }) =>
    (req, res) =>
      sendV1(res, v1Required([v1Accept(requestUrl(req), 'base', BASE_USDC_TOKEN, payTo, '0.01')])),

  'pay-to-listing': () => (req, res) =>
    sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, LISTING_WALLET)])),

  // The fleet wallet with a zero-width space appended renders as the honest 402, but no wallet
  // can sign to it.
  'hidden-payee':
    ({ payTo }) =>
    (req, res) =>
      sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, `${payTo}\u200b`)])),
} satisfies Record<string, Factory>;

export type HandwrittenName = keyof typeof handwritten;
