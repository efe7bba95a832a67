/**
 * What the watch routes answer and take besides the watch itself (docs/api.md "Watches"): a watch as its owner
 * sees it, the answer that shows its token once, one signed event, a page of events and that page's query. As in
 * `answer-schemas.ts`, objects are loose; these schemas are what `/openapi.json` and the MCP tools publish, the
 * events route parses its query with {@link WatchEventsQuerySchema}, and the tests hold live answers to the rest.
 */
import * as v from 'valibot';
import { coded } from './input-codes.ts';
import { WATCH_EVENT_TYPES } from './watch-events.ts';

const text = v.string();
const nullableText = v.nullable(v.string());
const about = <T extends v.GenericSchema>(schema: T, words: string) => v.pipe(schema, v.description(words));

/** Most events a page holds. */
export const WATCH_EVENTS_PAGE_MAX = 100;

/**
 * A watch's state: `paused` after 24 hours of failed deliveries, `stopped` after a 410, `opted_out` once its host is
 * on the opt-out list, `expired` after its period. The first three can be resumed.
 */
const WatchStatus = v.picklist(['active', 'paused', 'stopped', 'opted_out', 'expired', 'deleted']);

/** `GET /v1/watches/{watch_id}`: a watch as its owner sees it (never its token). */
export const WatchAnswerSchema = v.looseObject({
  id: about(v.pipe(text, v.regex(/^wa-[0-9a-f]{32}$/)), 'The watch id, wa-<32 hex digits>.'),
  url: text,
  method: v.picklist(['GET', 'POST']),
  pay_to: nullableText,
  network: nullableText,
  claimed_price: nullableText,
  webhook_url: nullableText,
  events: v.array(v.picklist(WATCH_EVENT_TYPES)),
  status: WatchStatus,
  created_at: text,
  expires_at: text,
  interval_s: v.pipe(v.number(), v.integer(), v.minValue(1)),
  events_url: text,
});

/** `POST /v1/watches` (201): the watch and its management token, shown this once (only its hash is kept). */
export const WatchCreatedSchema = v.looseObject({
  ...WatchAnswerSchema.entries,
  token: about(
    v.pipe(text, v.regex(/^wt_/)),
    'The management token (x-watch-token on every other watch route); shown only in this answer.',
  ),
});

/** `POST /v1/watches/{watch_id}/resume`: the watch, active again, and how many undelivered events it will send. */
export const WatchResumedSchema = v.looseObject({
  ...WatchAnswerSchema.entries,
  deliveries_requeued: about(
    v.pipe(v.number(), v.integer(), v.minValue(0)),
    'Events whose delivery the pause cancelled or gave up, due again now with their same webhook-id.',
  ),
});

/** `DELETE /v1/watches/{watch_id}`. */
export const WatchDeletedSchema = v.looseObject({ id: text, status: v.literal('deleted') });

/**
 * One event, signed like a receipt (RFC 8785 over every member but `signature`, Ed25519, `kid` in the JWKS); the
 * webhook's body is this JSON text, and its `id` is the delivery's `webhook-id`.
 */
export const WatchEventSchema = v.looseObject({
  type: v.literal('watch-event'),
  id: about(
    v.pipe(text, v.regex(/^we-[0-9a-f]{32}$/)),
    'The event id; the webhook-id of every delivery of it.',
  ),
  event: v.picklist([...WATCH_EVENT_TYPES, 'watch_paused', 'watch_stopped', 'watch_opted_out']),
  watch_id: text,
  url: text,
  method: text,
  occurred_at: text,
  receipt_id: nullableText,
  receipt_url: nullableText,
  before: v.nullable(v.looseObject({})),
  after: v.nullable(v.looseObject({})),
  kid: text,
  signature: text,
});

/** `GET /v1/watches/{watch_id}/events`: newest first; `next` is the `before` of the following page. */
export const WatchEventsPageSchema = v.looseObject({
  watch_id: text,
  events: v.array(WatchEventSchema),
  next: nullableText,
});

/** The query of `GET /v1/watches/{watch_id}/events`, each member with its 400 code. */
export const WatchEventsQuerySchema = v.looseObject({
  limit: v.optional(
    about(
      coded(
        v.pipe(
          text,
          v.regex(/^\d{1,3}$/),
          v.transform(Number),
          v.integer(),
          v.minValue(1),
          v.maxValue(WATCH_EVENTS_PAGE_MAX),
        ),
        {
          code: 'bad_limit',
          message: `limit must be an integer from 1 to ${WATCH_EVENTS_PAGE_MAX}.`,
        },
      ),
      `Events per page, 1 to ${WATCH_EVENTS_PAGE_MAX} (default 50).`,
    ),
  ),
  before: v.optional(
    about(
      coded(v.pipe(text, v.regex(/^\d{1,15}$/), v.transform(Number)), {
        code: 'bad_cursor',
        message: 'before must be the next cursor of a previous page.',
      }),
      'The `next` of the previous page.',
    ),
  ),
});

/** The `resume_watch` tool: a watch's id and token. */
export const WatchResumeRequestSchema = v.looseObject({
  watch_id: about(v.pipe(text, v.regex(/^wa-[0-9a-f]{32}$/)), 'The watch id create_watch answered.'),
  token: about(v.pipe(text, v.minLength(1)), 'The management token create_watch answered (shown once).'),
});

/** The `watch_events` tool: a watch's id and token, and the page wanted. */
export const WatchEventsRequestSchema = v.looseObject({
  watch_id: about(v.pipe(text, v.regex(/^wa-[0-9a-f]{32}$/)), 'The watch id create_watch answered.'),
  token: about(v.pipe(text, v.minLength(1)), 'The management token create_watch answered (shown once).'),
  limit: v.optional(
    about(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(WATCH_EVENTS_PAGE_MAX)),
      'Events per page (default 50).',
    ),
  ),
  before: v.optional(about(v.pipe(text, v.regex(/^\d{1,15}$/)), 'The next of the previous page.')),
});
