/**
 * What each route and MCP tool takes, as valibot schemas built from the fields of `core/input-fields.ts`, with the
 * descriptions an agent reads when it decides what to send. Published twice (as `/openapi.json` parameters and
 * request bodies, and as the MCP tools' input schemas) and parsed with: each member of a route's input carries its
 * stable 400 code (`coded`, `core/input-codes.ts`). Unknown members are ignored by every route, so the objects are
 * loose.
 */
import * as v from 'valibot';
import { serviceIdOf } from './catalog.ts';
import { coded } from './input-codes.ts';
import {
  EvmAddressField,
  LookupCountField,
  NetworkField,
  PayToField,
  ServiceIdField,
  SkewSecondsField,
  TargetUrlField,
  TaskNameField,
  UsdAmountField,
} from './input-fields.ts';
import { PaymentStatusInputSchema } from './payment-input.ts';
import {
  PaymentRequiredField,
  paymentRequiredFailure,
  SelectedRequirementField,
  selectedRequirementFailure,
  sentChallengeProblem,
} from './sent-challenge.ts';
import { LABEL_RULE, LabelSchema } from './text.ts';
import { MAX_URL_LENGTH, parseTargetUrl } from './url.ts';

const about = <T extends v.GenericSchema>(schema: T, text: string) => v.pipe(schema, v.description(text));
const maybe = <T extends v.GenericSchema>(schema: T, text: string) => v.optional(about(schema, text));

const CLIENT = 'Optional app name, attribution only; never changes the answer.';

/** Values a form (`''`) or a JSON client (`null`) sends for "not given". */
const NOT_GIVEN = [null, ''] as const;

/** The words `parseTargetUrl` gives for a target it refuses; the issue's own when it accepts it. */
const refusal = (issue: v.BaseIssue<unknown>) => {
  const target = typeof issue.input === 'string' ? parseTargetUrl(issue.input) : null;
  return target !== null && !target.ok ? target.message : issue.message;
};

/** The check's target as published (`TargetUrlField`), read into the URL it requests and its dedupe form. */
const CheckUrlField = v.pipe(
  v.string('url must be a string.'),
  v.minLength(1, refusal),
  v.maxLength(MAX_URL_LENGTH, refusal),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const target = parseTargetUrl(dataset.value);
    if (target.ok) return { url: target.url.href, normalized: target.normalized };
    addIssue({ message: target.message });
    return NEVER;
  }),
);

/** A missing `url` against a bad one, as the check and by-url answer them. */
const urlRule = (issue: v.BaseIssue<unknown>) =>
  issue.input === undefined
    ? { code: 'missing_url', message: 'Parameter url is required.' }
    : { code: 'bad_url', message: issue.message };

/**
 * `GET` query and `POST` body of `/v1/products/endpoint-spot-check` (docs/api.md §4); the `check_endpoint` tool. Each
 * member carries its 400 code (docs/api.md §7); `api/params.ts` parses with this very schema.
 */
export const CheckInputSchema = coded(
  v.pipe(
    v.looseObject({
      url: about(
        coded(CheckUrlField, urlRule, { absent: [''] }),
        'The public http(s) URL of the x402 endpoint you are about to pay. Spotcheck sends it one unpaid request and reads its 402.',
      ),
      claimed_price: maybe(
        coded(
          UsdAmountField,
          { code: 'bad_claimed_price', message: 'claimed_price must be a non-negative USD amount.' },
          { absent: NOT_GIVEN },
        ),
        'The price in USD you were told (listing, docs, seller); a higher live price gives skip price_mismatch.',
      ),
      pay_to: maybe(
        coded(
          PayToField,
          { code: 'bad_pay_to', message: 'pay_to must be a 0x address (40 hex digits) or a Solana address.' },
          { absent: NOT_GIVEN },
        ),
        'The wallet you expect to pay; a live 402 asking for another wallet gives skip pay_to_mismatch. Defaults to the crawl listing.',
      ),
      network: maybe(
        coded(
          NetworkField,
          { code: 'bad_network', message: 'network must be a CAIP-2 id such as eip155:8453.' },
          { absent: NOT_GIVEN },
        ),
        'The CAIP-2 network you expect to pay on, for example eip155:8453 (Base).',
      ),
      // Only a missing method means GET: an empty or null one is refused.
      method: maybe(
        coded(v.picklist(['GET', 'POST']), { code: 'bad_method', message: 'method must be GET or POST.' }),
        'GET (default) or POST; POST probes with an empty JSON body, for POST-only endpoints.',
      ),
      task: maybe(
        coded(
          TaskNameField,
          { code: 'bad_task', message: 'task must be a task name from /v1/tasks.' },
          { absent: NOT_GIVEN },
        ),
        'The task the endpoint is for, from list_tasks / GET /v1/tasks (stored on the receipt).',
      ),
      mode: maybe(
        coded(
          v.picklist(['live', 'dry-run']),
          { code: 'bad_mode', message: 'mode must be live or dry-run.' },
          { absent: [''] },
        ),
        'live (default) or dry-run: free (50 a day), free-tier answer, never carries payment terms, so it is never an approval.',
      ),
      check_expiry: maybe(
        coded(
          v.union([v.picklist(['0', '1']), v.boolean(), v.picklist([0, 1])]),
          { code: 'bad_check_expiry', message: 'check_expiry must be 1 to enable it (or 0).' },
          { absent: NOT_GIVEN },
        ),
        '1 to skip a challenge whose every Base USDC option expires within skew_s seconds (reason challenge_expired).',
      ),
      skew_s: maybe(
        coded(
          SkewSecondsField,
          { code: 'bad_skew_s', message: 'skew_s must be an integer from 0 to 300.' },
          { absent: [''] },
        ),
        'Seconds of margin for check_expiry, 0 to 300 (default 30).',
      ),
      client: maybe(
        coded(
          LabelSchema,
          { code: 'bad_client', message: `client must be ${LABEL_RULE}.` },
          { absent: NOT_GIVEN },
        ),
        CLIENT,
      ),
      ref: maybe(
        coded(LabelSchema, { code: 'bad_ref', message: `ref must be ${LABEL_RULE}.` }, { absent: NOT_GIVEN }),
        'Attribution tag stored on the receipt; the form dry-run-<caller> sets mode dry-run.',
      ),
      payment_required: maybe(
        coded(PaymentRequiredField, paymentRequiredFailure, { absent: NOT_GIVEN }),
        'The 402 challenge you received, to have the verdict decided on exactly it: the PAYMENT-REQUIRED header value ' +
          '(base64), base64 of a v1 402 JSON body, or (POST, MCP) that JSON as an object; at most 16 KiB. pay only if ' +
          'the requirement you will sign passes every rule and matches what the endpoint shows Spotcheck now, else ' +
          'skip challenge_mismatch; payment_terms_sha256 is then the hash of that requirement.',
      ),
      selected_requirement: maybe(
        coded(SelectedRequirementField, selectedRequirementFailure, { absent: NOT_GIVEN }),
        'With payment_required: the accepts[] entry you selected to sign (object, or base64 of its JSON). Default: the ' +
          'one the verdict rules choose from the challenge.',
      ),
    }),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const problem = sentChallengeProblem(dataset.value);
      if (problem === null) return;
      const value = dataset.value as Record<string, unknown>;
      addIssue({
        message: problem.message,
        path: [
          { type: 'object', origin: 'value', input: value, key: problem.key, value: value[problem.key] },
        ],
      });
    }),
  ),
  { code: 'bad_body', message: 'The body must be a JSON object.' },
  {
    repeated: 'duplicate_parameter',
    order: [
      'url',
      'method',
      'task',
      'claimed_price',
      'pay_to',
      'network',
      'client',
      'ref',
      'mode',
      'check_expiry',
      'skew_s',
      'payment_required',
      'selected_requirement',
    ],
  },
);

/** A lookup member's rule: its code and words; `null` and `''` mean not given. */
const lookupRule = (code: string, message: string) => [{ code, message }, { absent: NOT_GIVEN }] as const;

/** An endpoint as a service id, also when it was sent as its URL (`serviceIdOf`). */
const EndpointField = v.pipe(
  v.union([ServiceIdField, TargetUrlField]),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    if (!/^https?:\/\//i.test(dataset.value)) {
      if (v.is(ServiceIdField, dataset.value)) return dataset.value;
      addIssue({ message: 'not a service id' });
      return NEVER;
    }
    const target = parseTargetUrl(dataset.value);
    if (target.ok) return serviceIdOf(target.normalized);
    addIssue({ message: target.message });
    return NEVER;
  }),
);

/**
 * The lookup's input (docs/api.md §4, its 400 codes in §7). `tasks` adds the check of a task against the catalog the
 * service holds at the time (`unknown_task`), `requireReference` the paid route's rule that `task` or `endpoint` is
 * given; neither shows in the JSON Schema, so every form publishes as {@link LookupInputSchema}.
 */
export function lookupInputSchema(options: { tasks?: readonly string[]; requireReference?: boolean } = {}) {
  const { tasks, requireReference = false } = options;
  const task = v.pipe(
    TaskNameField,
    v.check((name) => tasks === undefined || tasks.includes(name)),
  );
  return coded(
    v.pipe(
      v.looseObject({
        task: maybe(
          coded(
            task,
            (issue) =>
              issue.type === 'check'
                ? {
                    code: 'unknown_task',
                    message: `Task ${String(issue.input)} is not in the catalog; GET /v1/tasks lists the task names.`,
                  }
                : {
                    code: 'bad_task',
                    message: 'task must be a task name (lower-case letters, digits, . _ -).',
                  },
            { absent: NOT_GIVEN },
          ),
          'A task name from list_tasks / GET /v1/tasks.',
        ),
        endpoint: maybe(
          coded(
            EndpointField,
            ...lookupRule('bad_endpoint', 'endpoint must be a service id or an http(s) endpoint URL.'),
          ),
          'A service id or an endpoint URL: the facts of that one service.',
        ),
        max_price: maybe(
          coded(
            UsdAmountField,
            ...lookupRule('bad_max_price', 'max_price must be a non-negative USD amount.'),
          ),
          'Leave out services whose current price per call is above this (USD).',
        ),
        n: maybe(
          coded(LookupCountField, ...lookupRule('bad_n', 'n must be an integer from 1 to 20.')),
          'Paid calls considered per service, 1 to 20 (default 5).',
        ),
        limit: maybe(
          coded(LookupCountField, ...lookupRule('bad_limit', 'limit must be an integer from 1 to 20.')),
          'Services returned, 1 to 20 (default 10).',
        ),
        client: maybe(
          coded(LabelSchema, ...lookupRule('bad_client', `client must be ${LABEL_RULE}.`)),
          CLIENT,
        ),
        ref: maybe(
          coded(LabelSchema, ...lookupRule('bad_ref', `ref must be ${LABEL_RULE}.`)),
          'Attribution tag only.',
        ),
        payer: maybe(
          coded(
            EvmAddressField,
            ...lookupRule('bad_payer', 'payer must be a 0x wallet address (40 hex digits).'),
          ),
          'Your wallet (0x), to report which vendor was paid; attribution only.',
        ),
      }),
      v.check((input) => !requireReference || input.task !== undefined || input.endpoint !== undefined),
    ),
    { code: 'missing_task_or_endpoint', message: 'The paid lookup needs task or endpoint.' },
    {
      repeated: 'duplicate_parameter',
      order: ['task', 'max_price', 'n', 'limit', 'endpoint', 'client', 'ref', 'payer'],
    },
  );
}

/** Query of `GET /v1/lookup` and `GET /v1/lookup/paid` (docs/api.md §4); the `lookup` tool. */
export const LookupInputSchema = lookupInputSchema();

/** Query or body of `/v1/products/payment-status` (docs/api.md §4); the `payment_status` tool. */
export { PaymentStatusInputSchema };

/**
 * A paging number of a query (decimal text of at most 7 digits, leading zeros read as the number) from 1 to `max`,
 * read as that number. The range is stated by the pattern, not by checks after the conversion: the published JSON
 * Schema stops at a transformation, so the bounds a client reads are the pattern's, and they are the route's.
 */
function pagingField(max: number, pattern: RegExp, code: string) {
  const message = `Expected a whole number from 1 to ${max}.`;
  const text = v.pipe(v.string(), v.maxLength(7), v.regex(pattern), v.transform(Number));
  return coded(text, { code, message }, { absent: [''] });
}

/**
 * Query of `GET /v1/receipts` (docs/api.md §4): each member carries its 400 code, and `api/routes/receipts.ts` parses
 * with this very schema.
 */
export const ReceiptListQuerySchema = v.looseObject({
  type: maybe(
    coded(v.picklist(['dry-run', 'live']), { code: 'bad_type', message: 'type must be dry-run or live.' }),
    'dry-run keeps dry runs only, live keeps live checks only.',
  ),
  page: maybe(
    pagingField(1_000_000, /^0*(?:[1-9]\d{0,5}|1000000)$/, 'bad_page'),
    'Page number, 1-based, 1 to 1,000,000 (default 1).',
  ),
  page_size: maybe(
    pagingField(500, /^0*(?:[1-9]\d?|[1-4]\d\d|500)$/, 'bad_page_size'),
    'Receipts per page, 1 to 500 (default 50).',
  ),
});

/**
 * Query of `GET /v1/receipts/by-url` (docs/api.md §4): each member carries its 400 code, and
 * `api/routes/receipts.ts` parses with this very schema.
 */
export const ReceiptByUrlQuerySchema = v.looseObject({
  url: about(
    coded(CheckUrlField, urlRule, { absent: [''] }),
    'The endpoint URL; its latest public receipt is answered: one of its listed form, or, unlisted, of exactly this URL.',
  ),
  method: maybe(
    coded(v.picklist(['GET', 'POST']), { code: 'bad_method', message: 'method must be GET or POST.' }),
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

/** Query of `GET /v1/skips` and `/v1/skips.json` (docs/api.md §4: page size 500). */
export const SkipsQuerySchema = v.looseObject({
  page: maybe(
    coded(v.pipe(v.string(), v.regex(/^[1-9][0-9]{0,6}$/)), {
      code: 'bad_page',
      message: 'page must be a positive whole number.',
    }),
    'Page number, 1-based (default 1).',
  ),
});

/** Query of `GET /badge/{host}.svg` (and `.png`, `.json`). */
export const BadgeQuerySchema = v.looseObject({
  path: maybe(
    coded(v.pipe(v.string(), v.regex(/^\/[^\s?#]{0,2000}$/)), {
      code: 'bad_path',
      message: 'path must start with / and hold no spaces, ? or #.',
    }),
    'An exact path on the host: the badge of that endpoint instead of the whole host.',
  ),
});
