/**
 * What each route and MCP tool takes, as valibot schemas built from the very fields the parsers check
 * (`core/input-fields.ts`), with the descriptions an agent reads when it decides what to send. Published twice:
 * as `/openapi.json` parameters and request bodies, and as the MCP tools' input schemas. Unknown members are
 * ignored by every route, so the objects are loose.
 */
import * as v from 'valibot';
import {
  LookupCountField,
  NetworkField,
  PayToField,
  SkewSecondsField,
  TargetUrlField,
  TaskNameField,
  UsdAmountField,
} from './input-fields.ts';
import { ServiceIdField } from './lookup-params.ts';
import { PaymentStatusInputSchema } from './payment-input.ts';
import { LabelSchema } from './text.ts';

const about = <T extends v.GenericSchema>(schema: T, text: string) => v.pipe(schema, v.description(text));
const maybe = <T extends v.GenericSchema>(schema: T, text: string) => v.optional(about(schema, text));

const CLIENT = 'Optional app name, attribution only; never changes the answer.';

/** `GET` query and `POST` body of `/v1/products/endpoint-spot-check` (spec §4); the `check_endpoint` tool. */
export const CheckInputSchema = v.looseObject({
  url: about(
    TargetUrlField,
    'The public http(s) URL of the x402 endpoint you are about to pay. Spotcheck sends it one unpaid request and reads its 402.',
  ),
  claimed_price: maybe(
    UsdAmountField,
    'The price in USD you were told (listing, docs, seller); a higher live price gives skip price_mismatch.',
  ),
  pay_to: maybe(
    PayToField,
    'The wallet you expect to pay; a live 402 asking for another wallet gives skip pay_to_mismatch. Defaults to the crawl listing.',
  ),
  network: maybe(NetworkField, 'The CAIP-2 network you expect to pay on, for example eip155:8453 (Base).'),
  method: maybe(
    v.picklist(['GET', 'POST']),
    'GET (default) or POST; POST probes with an empty JSON body, for POST-only endpoints.',
  ),
  task: maybe(
    TaskNameField,
    'The task the endpoint is for, from list_tasks / GET /v1/tasks (stored on the receipt).',
  ),
  mode: maybe(
    v.picklist(['live', 'dry-run']),
    'live (default) or dry-run: free (50 a day), free-tier answer, never carries payment terms, so it is never an approval.',
  ),
  check_expiry: maybe(
    v.union([v.picklist(['0', '1']), v.boolean(), v.picklist([0, 1])]),
    '1 to skip a challenge whose every Base USDC option expires within skew_s seconds (reason challenge_expired).',
  ),
  skew_s: maybe(SkewSecondsField, 'Seconds of margin for check_expiry, 0 to 300 (default 30).'),
  client: maybe(LabelSchema, CLIENT),
  ref: maybe(
    LabelSchema,
    'Attribution tag stored on the receipt; the form dry-run-<caller> sets mode dry-run.',
  ),
});

const LOOKUP_FIELDS = {
  task: maybe(TaskNameField, 'A task name from list_tasks / GET /v1/tasks.'),
  endpoint: maybe(
    v.union([ServiceIdField, TargetUrlField]),
    'A service id or an endpoint URL: the facts of that one service.',
  ),
  max_price: maybe(UsdAmountField, 'Leave out services whose current price per call is above this (USD).'),
  n: maybe(LookupCountField, 'Paid calls considered per service, 1 to 20 (default 5).'),
  limit: maybe(LookupCountField, 'Services returned, 1 to 20 (default 10).'),
  client: maybe(LabelSchema, CLIENT),
  ref: maybe(LabelSchema, 'Attribution tag only.'),
  payer: maybe(
    v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/)),
    'Your wallet (0x), to report which vendor was paid; attribution only.',
  ),
};

/** Query of `GET /v1/lookup` and `GET /v1/lookup/paid` (spec §4); the `lookup` tool. */
export const LookupInputSchema = v.looseObject(LOOKUP_FIELDS);

/** Query or body of `/v1/products/payment-status` (spec §4); the `payment_status` tool. */
export { PaymentStatusInputSchema };

/** Query of `GET /v1/receipts` (paging chosen in `api/routes/receipts.ts`). */
export const ReceiptListQuerySchema = v.looseObject({
  type: maybe(v.picklist(['dry-run', 'live']), 'dry-run keeps dry runs only, live keeps live checks only.'),
  page: maybe(v.pipe(v.string(), v.regex(/^\d{1,7}$/)), 'Page number, 1-based.'),
  page_size: maybe(v.pipe(v.string(), v.regex(/^\d{1,3}$/)), 'Receipts per page, 1 to 500 (default 50).'),
});

/** Query of `GET /v1/receipts/by-url`. */
export const ReceiptByUrlQuerySchema = v.looseObject({
  url: about(
    TargetUrlField,
    'The endpoint URL; its latest public receipt is answered: one of its listed form, or, unlisted, of exactly this URL.',
  ),
  method: maybe(
    v.picklist(['GET', 'POST']),
    'For an unlisted URL, the method whose checks count (default GET); a listed URL answers for its listed method.',
  ),
});

/** A receipt id as `sc-`/`ps-` receipts carry it. */
export const ReceiptIdField = about(
  v.pipe(v.string(), v.regex(/^(?:sc|ps)-[a-z2-7]{26}$/)),
  'A receipt id: sc-… for checks, ps-… for payment-status checks.',
);

/** The `get_receipt` tool: one receipt by id, or the latest for an endpoint URL. */
export const ReceiptRequestSchema = v.looseObject({
  id: v.optional(ReceiptIdField),
  url: maybe(TargetUrlField, 'An endpoint URL: its latest receipt (GET /v1/receipts/by-url).'),
});

/** The `verify_receipt` tool: a receipt by id, or a receipt object you hold (a downloaded file). */
export const VerifyReceiptRequestSchema = v.looseObject({
  id: v.optional(ReceiptIdField),
  receipt: maybe(
    v.record(v.string(), v.unknown()),
    'A signed receipt as JSON (for example a file downloaded earlier); verified as is.',
  ),
});

/** Query of `GET /v1/skips` and `/v1/skips.json` (spec §4: page size 500). */
export const SkipsQuerySchema = v.looseObject({
  page: maybe(v.pipe(v.string(), v.regex(/^[1-9][0-9]{0,6}$/)), 'Page number, 1-based (default 1).'),
});

/** Query of `GET /badge/{host}.svg` (and `.png`, `.json`). */
export const BadgeQuerySchema = v.looseObject({
  path: maybe(
    v.pipe(v.string(), v.regex(/^\/[^\s?#]{0,2000}$/)),
    'An exact path on the host: the badge of that endpoint instead of the whole host.',
  ),
});
