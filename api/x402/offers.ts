/**
 * The service's own paid offers, as data (docs/api.md §4, §8): price in atomic USDC (from `core/limits.ts`), path,
 * the methods each path accepts, and a bazaar discovery declaration per method (query parameters for GET, a JSON
 * body for POST) with an output example, so crawlers can index the routes (docs/x402.md §6.1, §9 item 7).
 */
import { atomicToUsdText } from '../../core/amount.ts';
import { LIMITS, WATCH_LIMITS } from '../../core/limits.ts';
import { BASE, BASE_USDC } from '../../core/networks.ts';
import { CheckInputSchema, LookupInputSchema, PaymentStatusInputSchema } from '../../core/request-schemas.ts';
import { WatchInputSchema } from '../../core/watch-input.ts';
import { propertiesOf } from '../json-schema.ts';
import type { Offer } from './_types.ts';

/** The names of the offers; `offerFor` takes one. */
export const OFFER_NAMES = ['check', 'lookup', 'payment-status', 'setup-pack', 'watch'] as const;
export type OfferName = (typeof OFFER_NAMES)[number];
export type OfferMethod = 'GET' | 'POST';

type Discovery = NonNullable<Offer['discovery']>;
type OfferSpec = {
  path: string;
  priceAtomic: string;
  description: string;
  discovery: Partial<Record<OfferMethod, Discovery>>;
};

const WALLET = '0x1111111111111111111111111111111111111111';
const TX = '0x5f1c0e0e7a4b0d3f8c2a9e1b6d4f7a2c3e5b8d1f0a9c7e6b5d4c3b2a1f0e9d8c';
const NONCE = '0x8a3d5f0c1e2b4a6d8f0e1c3b5a7d9f2e4c6b8a0d1f3e5c7b9a2d4f6e8c0b1a3d';
const paid = { tier: 'paid', charged_usd: atomicToUsdText(LIMITS.checkPriceAtomic), tx: TX };

// Discovery input schemas are the schemas the routes publish (`core/request-schemas.ts`), never a copy. Their
// members accept a query string's text as well as JSON values, so each example validates against its own schema
// (the SDK's `validateDiscoveryExtension`, which discovery tools run before listing).
const checkParams = propertiesOf(CheckInputSchema).properties;
const checkOutput = {
  verdict: 'pay',
  reason: 'price_ok',
  quoted_price_usd: 0.01,
  claimed_price_usd: 0.01,
  pay_to: WALLET,
  network: BASE,
  asset: BASE_USDC,
  payment: { network: BASE, asset: BASE_USDC, amount: { atomic: '10000', usd: 0.01 }, pay_to: WALLET },
  check_type: 'dry-run',
  receipt_id: 'sc-k3vxq7m2d5t4p6w8r2n4b6c7ya',
  reason_code: 'price_ok',
  confidence: 'high',
  access: paid,
};

const lookupParams = propertiesOf(LookupInputSchema).properties;

const statusBody = propertiesOf(PaymentStatusInputSchema).properties;
// docs/api.md §4: the GET form takes these query parameters.
const STATUS_QUERY = ['payment_payload', 'tx_hash', 'from', 'nonce', 'valid_before', 'seller_url'];
const statusParams = Object.fromEntries(
  Object.entries(statusBody).filter(([name]) => STATUS_QUERY.includes(name)),
);
const statusOutput = {
  id: 'ps-7c2e9a41b0d3',
  type: 'payment-status',
  status: 'landed',
  reason: 'settled_onchain',
  safe_to_retry_same_payload: true,
  safe_to_resign: false,
  authorization: { from: WALLET, nonce: NONCE, used_onchain: true, expired: false },
  finality: { confirmations: 12, min_confirmations: 10, reorg_safe: true },
  access: paid,
};

const packOutput = {
  product: 'overnight-cos-pack',
  title: 'Overnight x402 buying: setup pack',
  price_usdc: '9.00',
  price_atomic: LIMITS.setupPackPriceAtomic,
  files: {
    prompts: [
      {
        name: '01-before-paying.md',
        media_type: 'text/markdown',
        bytes: 4096,
        sha256: '…',
        content_base64: '…',
      },
    ],
    templates: [
      { name: 'morning-report.html', media_type: 'text/html', bytes: 8192, sha256: '…', content_base64: '…' },
    ],
    guide: {
      name: 'spotcheck-overnight-guide.pdf',
      media_type: 'application/pdf',
      bytes: 40960,
      sha256: '…',
      content_base64: '…',
    },
  },
  access: { ...paid, charged_usd: atomicToUsdText(LIMITS.setupPackPriceAtomic) },
};

const watchOutput = {
  id: 'wa-3f9c2e1b7a6d5c4b3a2f1e0d9c8b7a69',
  token: 'wt_…',
  url: 'https://api.example.com/v1/forecast',
  method: 'GET',
  status: 'active',
  expires_at: '2026-12-24T10:00:00.000Z',
  access: { ...paid, charged_usd: atomicToUsdText(WATCH_LIMITS.priceAtomic) },
};

const OFFERS: Record<OfferName, OfferSpec> = {
  check: {
    path: '/v1/products/endpoint-spot-check',
    priceAtomic: LIMITS.checkPriceAtomic,
    description: 'Pre-payment check of an x402 endpoint: pay, skip or recheck, with a signed public receipt.',
    discovery: {
      GET: {
        input: { url: 'https://api.example.com/v1/forecast', claimed_price: '0.01' },
        inputSchema: { properties: checkParams, required: ['url'] },
        output: { example: checkOutput },
      },
      POST: {
        bodyType: 'json',
        input: { url: 'https://api.example.com/v1/forecast', claimed_price: 0.01 },
        inputSchema: { type: 'object', properties: checkParams, required: ['url'] },
        output: { example: checkOutput },
      },
    },
  },
  lookup: {
    path: '/v1/lookup/paid',
    priceAtomic: LIMITS.lookupPriceAtomic,
    description:
      'Catalog lookup: services for a task, sorted by known-answer pass rate over paid calls, then price.',
    discovery: {
      GET: {
        input: { task: 'weather-current', max_price: '0.05' },
        inputSchema: { properties: lookupParams },
        output: { example: { results: [], facts_only: [], access: paid } },
      },
    },
  },
  'payment-status': {
    path: '/v1/products/payment-status',
    priceAtomic: LIMITS.paymentStatusPriceAtomic,
    description: 'Did a Base USDC (EIP-3009) payment land on chain, and is signing a new one safe?',
    discovery: {
      GET: {
        input: { from: WALLET, nonce: NONCE, valid_before: '1767225600' },
        inputSchema: { properties: statusParams },
        output: { example: statusOutput },
      },
      POST: {
        bodyType: 'json',
        input: { from: WALLET, nonce: NONCE, valid_before: '1767225600' },
        inputSchema: { type: 'object', properties: statusBody },
        output: { example: statusOutput },
      },
    },
  },
  watch: {
    path: '/v1/watches',
    priceAtomic: WATCH_LIMITS.priceAtomic,
    description: `Watch an x402 endpoint for ${WATCH_LIMITS.periodDays} days: probed every 10 minutes, a signed webhook when its terms or verdict change.`,
    discovery: {
      POST: {
        bodyType: 'json',
        input: {
          url: 'https://api.example.com/v1/forecast',
          webhook_url: 'https://hooks.example.com/spotcheck',
        },
        inputSchema: {
          type: 'object',
          properties: propertiesOf(WatchInputSchema).properties,
          required: ['url'],
        },
        output: { example: watchOutput },
      },
    },
  },
  'setup-pack': {
    path: '/v1/products/overnight-cos-pack',
    priceAtomic: LIMITS.setupPackPriceAtomic,
    description:
      'Setup pack for agents buying x402 services overnight: prompts, an HTML report template, a PDF guide.',
    discovery: {
      GET: { output: { example: packOutput } },
      POST: {
        bodyType: 'json',
        input: {},
        inputSchema: { type: 'object', properties: {} },
        output: { example: packOutput },
      },
    },
  },
};

/** The offer `name` served at `baseUrl` (the public origin, `BASE_URL`) for `method`. */
export function offerFor(name: OfferName, baseUrl: string, method: OfferMethod = 'GET'): Offer {
  const spec = OFFERS[name];
  const discovery = spec.discovery[method];
  if (!discovery) throw new RangeError(`x402 offer ${name} is not sold over ${method}`);
  return {
    route: `${method} ${spec.path}`,
    priceAtomic: spec.priceAtomic,
    description: spec.description,
    resourceUrl: `${baseUrl.replace(/\/+$/, '')}${spec.path}`,
    mimeType: 'application/json',
    discovery,
  };
}

/** The price of offer `name` in atomic USDC (`core/limits.ts`), for the texts that name it. */
export function offerPriceAtomic(name: OfferName): string {
  return OFFERS[name].priceAtomic;
}

/** The methods an offer is sold over, for routing (HEAD follows GET). */
export function offerMethods(name: OfferName): OfferMethod[] {
  const methods: OfferMethod[] = ['GET', 'POST'];
  return methods.filter((method) => OFFERS[name].discovery[method] !== undefined);
}
