/**
 * The watch routes in `/openapi.json` (docs/api.md "Watches", `api/routes/watches.ts`): making a watch (bought
 * through x402 for a period, or with an exempt or hosted key), reading, resuming and deleting it and reading its
 * signed events, each guarded by the management token in `x-watch-token`. The input and answers are the valibot schemas the
 * route parses and the tests hold answers to (`core/watch-input.ts`, `core/watch-schemas.ts`).
 */
import { WatchInputSchema } from '../core/watch-input.ts';
import {
  WatchAnswerSchema,
  WatchCreatedSchema,
  WatchDeletedSchema,
  WatchEventsPageSchema,
  WatchEventsQuerySchema,
  WatchResumedSchema,
} from '../core/watch-schemas.ts';
import { codes, KEY_401, type Operation, PAID_502 } from './openapi-model.ts';

/** The path parameter of every route under `/v1/watches/{watch_id}`. */
export const WATCH_ID = {
  name: 'watch_id',
  description: 'The watch id, wa-<32 hex digits>.',
  pattern: '^wa-[0-9a-f]{32}$',
};
const TOKEN = [
  {
    name: 'x-watch-token',
    description:
      'The management token the watch was made with (shown once, in the answer of POST /v1/watches).',
    pattern: '^wt_[A-Za-z0-9_-]+$',
  },
];
const NOT_FOUND = `${codes('watch_not_found')}: no watch with this id and token (one answer for an unknown id, a wrong or missing token and a deleted watch).`;

const guarded = (
  method: 'get' | 'post' | 'delete',
  path: string,
  operationId: string,
  summary: string,
): Omit<Operation, 'answer'> => ({
  method,
  path,
  operationId,
  summary,
  pathParameter: WATCH_ID,
  headerParameters: TOKEN,
  errors: { 404: NOT_FOUND },
});

/** The watch operations. */
export const WATCH_OPERATIONS: readonly Operation[] = [
  {
    method: 'post',
    path: '/v1/watches',
    operationId: 'createWatch',
    summary:
      'Watch an x402 endpoint: probed every interval, a signed event (and a signed webhook) when its verdict or terms change, it goes down or recovers, or it is delisted.',
    description:
      'Bought through x402 for a period (price and period in /rules.json), or made with an exempt or hosted ' +
      'key (billed per watch-month on the monthly invoice). Both URLs pass the SSRF gate before any payment. ' +
      'The answer shows the management token once; only its hash is kept.',
    input: WatchInputSchema,
    answer: WatchCreatedSchema,
    success: 201,
    errors: {
      400: codes(
        'bad_body',
        'missing_url',
        'bad_url',
        'url_refused',
        'bad_method',
        'bad_pay_to',
        'bad_network',
        'bad_claimed_price',
        'bad_webhook_url',
        'webhook_url_refused',
        'bad_events',
        'host_opted_out',
      ),
      401: KEY_401,
      413: codes('body_too_large'),
      429: `${codes('rate_limited')}: in hosted mode, the key passed its calls per minute (docs/api.md §8).`,
      502: PAID_502,
    },
    offer: 'watch',
    keys: 'optional',
  },
  {
    ...guarded(
      'get',
      '/v1/watches/{watch_id}/events',
      'watchEvents',
      "A watch's signed events, newest first.",
    ),
    input: WatchEventsQuerySchema,
    answer: WatchEventsPageSchema,
    errors: { 400: codes('bad_limit', 'bad_cursor'), 404: NOT_FOUND },
  },
  {
    ...guarded('get', '/v1/watches/{watch_id}', 'watch', 'A watch and its state.'),
    answer: WatchAnswerSchema,
  },
  {
    ...guarded(
      'post',
      '/v1/watches/{watch_id}/resume',
      'resumeWatch',
      'Resumes a paused, stopped or opted-out watch: probed again, its undelivered events sent with their same webhook-id.',
    ),
    description:
      'A watch is paused after 24 hours of failed deliveries, stopped by a 410 from its receiver, and opted out when ' +
      'its host is put on the opt-out list. Resuming makes it active again (and, for a hosted key, billed again) ' +
      'until its expiry; every event whose delivery was cancelled or given up is due again at once, with a fresh ' +
      '24-hour retry window and the same webhook-id. Resuming an active watch changes nothing. No body.',
    answer: WatchResumedSchema,
    errors: {
      404: NOT_FOUND,
      409: `${codes('watch_expired', 'host_opted_out')}: the watch ran out its period, or its host is on the opt-out list.`,
    },
  },
  {
    ...guarded('delete', '/v1/watches/{watch_id}', 'deleteWatch', 'Stops and deletes a watch.'),
    answer: WatchDeletedSchema,
  },
];
