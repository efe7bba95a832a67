/**
 * What `POST /v1/watches` takes (docs/api.md "Watches"), as the valibot schema the route parses with and
 * `/openapi.json` publishes; each member carries its stable 400 code (`coded`, `core/input-codes.ts`). The SSRF gate
 * of the URLs (DNS included) runs in the route, after this and before any payment.
 */
import * as v from 'valibot';
import { coded } from './input-codes.ts';
import { NetworkField, PayToField, UsdAmountField } from './input-fields.ts';
import { MAX_URL_LENGTH, parseTargetUrl } from './url.ts';
import { WATCH_EVENT_TYPES } from './watch-events.ts';

const about = <T extends v.GenericSchema>(schema: T, text: string) => v.pipe(schema, v.description(text));
const maybe = <T extends v.GenericSchema>(schema: T, text: string) => v.optional(about(schema, text));
const NOT_GIVEN = [null, ''] as const;

/** The watched endpoint's URL, read into the URL it requests and its dedupe form (as the check reads it). */
const WatchedUrlField = v.pipe(
  v.string('url must be a string.'),
  v.minLength(1),
  v.maxLength(MAX_URL_LENGTH),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const target = parseTargetUrl(dataset.value);
    if (target.ok) return { url: target.url.href, normalized: target.normalized };
    addIssue({ message: target.message });
    return NEVER;
  }),
);

/** A receiver URL: http(s), no userinfo, at most 2048 characters (the gate decides the address). */
const WebhookUrlField = v.pipe(
  v.string(),
  v.maxLength(MAX_URL_LENGTH),
  v.check((text) => {
    if (!URL.canParse(text)) return false;
    const url = new URL(text);
    return (
      (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === ''
    );
  }),
);

/** The body of `POST /v1/watches`; the `create_watch` tool. */
export const WatchInputSchema = coded(
  v.looseObject({
    url: about(
      coded(WatchedUrlField, (issue) =>
        issue.input === undefined
          ? { code: 'missing_url', message: 'Parameter url is required.' }
          : { code: 'bad_url', message: issue.message },
      ),
      'The public http(s) URL of the x402 endpoint to watch.',
    ),
    method: maybe(
      coded(v.picklist(['GET', 'POST']), { code: 'bad_method', message: 'method must be GET or POST.' }),
      'GET (default) or POST: how the endpoint is probed.',
    ),
    pay_to: maybe(
      coded(
        PayToField,
        { code: 'bad_pay_to', message: 'pay_to must be a 0x address (40 hex digits) or a Solana address.' },
        { absent: NOT_GIVEN },
      ),
      'The wallet you expect to pay; the verdict turns skip pay_to_mismatch when the endpoint asks for another.',
    ),
    network: maybe(
      coded(
        NetworkField,
        { code: 'bad_network', message: 'network must be a CAIP-2 id such as eip155:8453.' },
        { absent: NOT_GIVEN },
      ),
      'The CAIP-2 network you expect to pay on.',
    ),
    claimed_price: maybe(
      coded(
        UsdAmountField,
        { code: 'bad_claimed_price', message: 'claimed_price must be a non-negative USD amount.' },
        { absent: NOT_GIVEN },
      ),
      'The price in USD you expect; a higher live price turns the verdict skip price_mismatch.',
    ),
    webhook_url: maybe(
      coded(
        WebhookUrlField,
        { code: 'bad_webhook_url', message: 'webhook_url must be a public http(s) URL without userinfo.' },
        { absent: NOT_GIVEN },
      ),
      'Where each event is POSTed, signed (Standard Webhooks, v1a Ed25519 with the receipt key). Without it, read events at /v1/watches/{id}/events.',
    ),
    events: maybe(
      coded(v.pipe(v.array(v.picklist(WATCH_EVENT_TYPES)), v.minLength(1)), {
        code: 'bad_events',
        message: `events must be a non-empty list of ${WATCH_EVENT_TYPES.join(', ')}.`,
      }),
      'The events to send to the webhook (default: all). Every event is kept for the poll route.',
    ),
  }),
  { code: 'bad_body', message: 'The body must be a JSON object.' },
);

/** The input as parsed. */
export type WatchInput = v.InferOutput<typeof WatchInputSchema>;
