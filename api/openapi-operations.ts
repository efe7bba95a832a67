/**
 * The operations `/openapi.json` describes: every route of docs/api.md §4 the service serves today, with the valibot
 * schemas of what it takes and answers (`core/request-schemas.ts`, `core/answer-schemas.ts`), the error codes of
 * each status, the x402 offer it sells (prices come from `api/x402/offers.ts`, the seller's own table) and
 * whether service keys apply. Routes that are not served are not described; `test/integration/api/openapi.test.ts`
 * fails when a route the app registers, or a path of docs/api.md §4, is missing here.
 */
import {
  CheckAnswerSchema,
  HealthSchema,
  JwksSchema,
  LookupAnswerSchema,
  PaymentStatusAnswerSchema,
  ReceiptListSchema,
  ReceiptSchema,
  SetupPackAnswerSchema,
  TasksAnswerSchema,
} from '../core/answer-schemas.ts';
import { LIMITS } from '../core/limits.ts';
import { PAYMENT_INPUT_CODES } from '../core/payment-input.ts';
import {
  CheckInputSchema,
  LookupInputSchema,
  PaymentStatusInputSchema,
  ReceiptByUrlQuerySchema,
  ReceiptListQuerySchema,
} from '../core/request-schemas.ts';
import { SENT_CHALLENGE_CODES } from '../core/sent-challenge.ts';
import { HOSTED_OPERATIONS } from './openapi-hosted.ts';
import { LISTING_OPERATIONS } from './openapi-listings.ts';
import { codes, KEY_401, type Operation, PAID_502 } from './openapi-model.ts';
import { WATCH_OPERATIONS } from './openapi-watches.ts';

const CHECK_400 = codes(
  'missing_url',
  'bad_url',
  'duplicate_parameter',
  'bad_method',
  'bad_task',
  'bad_claimed_price',
  'bad_pay_to',
  'bad_network',
  'bad_client',
  'bad_ref',
  'bad_mode',
  'bad_check_expiry',
  'bad_skew_s',
  ...SENT_CHALLENGE_CODES,
  'bad_body',
  'bad_end_user',
);
const LOOKUP_400 = codes(
  'duplicate_parameter',
  'bad_task',
  'unknown_task',
  'bad_max_price',
  'bad_n',
  'bad_limit',
  'bad_endpoint',
  'bad_client',
  'bad_ref',
  'bad_payer',
);
const HOSTED_429 = `${codes('rate_limited')}: in hosted mode, the key passed its calls per minute (docs/api.md §8); see Retry-After and RateLimit.`;

const CHECK = '/v1/products/endpoint-spot-check';
const check = (method: 'get' | 'post'): Operation => ({
  method,
  path: CHECK,
  operationId: `check${method === 'get' ? 'Get' : 'Post'}`,
  summary: 'Check an x402 endpoint before paying it: pay, skip or recheck, with a signed receipt.',
  description:
    'One unpaid probe (reused for 5 minutes per URL and method), a verdict and a signed public receipt. Failures of ' +
    'the target are verdicts, never HTTP errors (docs/api.md §7). Free answers and dry runs have the short shape of ' +
    'docs/api.md §2.4; paid and service-key answers the full shape of §2.1.',
  input: CheckInputSchema,
  answer: CheckAnswerSchema,
  errors: {
    400: CHECK_400,
    401: KEY_401,
    413: codes('body_too_large'),
    429: `${codes('dry_run_limit')}: dry runs are limited per caller and per address per UTC day. ${HOSTED_429}`,
    502: PAID_502,
  },
  offer: 'check',
  keys: 'optional',
  freeQuota: true,
});

const STATUS = '/v1/products/payment-status';
const paymentStatus = (method: 'get' | 'post'): Operation => ({
  method,
  path: STATUS,
  operationId: `paymentStatus${method === 'get' ? 'Get' : 'Post'}`,
  summary: 'Did a Base USDC (EIP-3009) payment land, and is signing a new one safe?',
  description: 'A bare request (no reference) answers 402 with the payment requirement.',
  input: PaymentStatusInputSchema,
  answer: PaymentStatusAnswerSchema,
  errors: {
    400: codes(...PAYMENT_INPUT_CODES, 'bad_end_user'),
    401: KEY_401,
    429: HOSTED_429,
    413: codes('body_too_large'),
    502: PAID_502,
    503: `${codes('chain_unavailable')}: no chain source answered; nothing charged and no free check used.`,
  },
  offer: 'payment-status',
  keys: 'optional',
  freeQuota: true,
});

const pack = (method: 'get' | 'post'): Operation => ({
  method,
  path: '/v1/products/overnight-cos-pack',
  operationId: `setupPack${method === 'get' ? 'Get' : 'Post'}`,
  summary: 'The setup pack for agents buying x402 services overnight (always paid).',
  answer: SetupPackAnswerSchema,
  errors: { 502: PAID_502 },
  offer: 'setup-pack',
});

/** Every operation, in the order of docs/api.md §4. */
export const OPERATIONS: readonly Operation[] = [
  {
    method: 'get',
    path: '/v1/lookup',
    operationId: 'lookup',
    summary:
      "Services for a task, ranked by known-answer pass rate over the service's own paid calls, then price.",
    description: `Free: ${LIMITS.freeLookupsPerDay} lookups per client per UTC day, then 402 (pay through /v1/lookup/paid or with a payment here).`,
    input: LookupInputSchema,
    answer: LookupAnswerSchema,
    errors: {
      400: LOOKUP_400,
      401: 'A service key other than an exempt key: lookups need no key (docs/api.md §5.1).',
      502: PAID_502,
    },
    offer: 'lookup',
    freeQuota: true,
  },
  {
    method: 'get',
    path: '/v1/lookup/paid',
    operationId: 'lookupPaid',
    summary: 'The paid lookup: no free quota; task or endpoint is required.',
    description: 'Parameters are checked after the 402 and before anything is settled.',
    input: LookupInputSchema,
    answer: LookupAnswerSchema,
    errors: { 400: `${LOOKUP_400}, ${codes('missing_task_or_endpoint')}`, 502: PAID_502 },
    offer: 'lookup',
  },
  check('get'),
  check('post'),
  pack('get'),
  pack('post'),
  paymentStatus('post'),
  paymentStatus('get'),
  {
    method: 'get',
    path: '/v1/tasks',
    operationId: 'tasks',
    summary: 'The task names lookups accept.',
    answer: TasksAnswerSchema,
    errors: {},
  },
  {
    method: 'get',
    path: '/v1/receipts',
    operationId: 'receipts',
    summary: 'Receipts, newest first, paged.',
    input: ReceiptListQuerySchema,
    answer: ReceiptListSchema,
    errors: { 400: codes('bad_type', 'bad_page', 'bad_page_size') },
  },
  {
    method: 'get',
    path: '/v1/receipts/by-url',
    operationId: 'receiptByUrl',
    summary: 'The latest receipt for an endpoint URL.',
    input: ReceiptByUrlQuerySchema,
    answer: ReceiptSchema,
    answerHeaders: {
      'x-delisted-at':
        'Present when the published crawl found that no source lists the endpoint (URL and method) any more: when that crawl finished (ISO 8601). Gone once a source lists it again, or 90 days after.',
    },
    html: true,
    errors: { 400: codes('missing_url', 'bad_url', 'bad_method'), 404: codes('receipt_not_found') },
  },
  {
    method: 'get',
    path: '/v1/receipts/{receipt_id}',
    operationId: 'receipt',
    summary: 'One signed receipt, free to read.',
    description:
      'A browser (Accept preferring text/html) gets the receipt as its page; with `.json` after the id, always the JSON.',
    pathParameter: {
      name: 'receipt_id',
      description: 'sc-… or ps-…, optionally followed by .json',
      pattern: '^(?:sc|ps)-[a-z2-7]{26}(?:\\.json)?$',
    },
    answer: ReceiptSchema,
    html: true,
    errors: { 404: codes('receipt_not_found') },
  },
  ...LISTING_OPERATIONS,
  ...HOSTED_OPERATIONS,
  ...WATCH_OPERATIONS,
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    operationId: 'jwks',
    summary: 'The public receipt-signing keys (Ed25519 JWKS; kid is the RFC 7638 thumbprint).',
    answer: JwksSchema,
    errors: {},
    needsDatabase: false,
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Liveness and the API version.',
    answer: HealthSchema,
    errors: {},
    needsDatabase: false,
  },
];
