/**
 * What the routes answer, as valibot schemas: published as the `/openapi.json` responses and the MCP tools'
 * output schemas, and used by the tests to hold every live answer to what is published. Objects are loose: docs/api.md
 * §9.3 makes additions the way the API grows, so a client must accept members it does not know. Inner shapes the
 * contract leaves open ("not shown") are plain objects here and documented in the README.
 */
import * as v from 'valibot';
import { REASONS } from './reasons.ts';

const about = <T extends v.GenericSchema>(schema: T, text: string) => v.pipe(schema, v.description(text));
const text = v.string();
const nullableText = v.nullable(v.string());
const nullableNumber = v.nullable(v.number());
const object = v.looseObject({});

/** The house error body, `{"error":{"code","message"}}`, of every 4xx and 5xx. */
export const ErrorBodySchema = v.object({
  error: v.object({
    code: about(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]*$/)), 'Stable snake_case code.'),
    message: text,
  }),
});

/** docs/api.md §2.5: the `hosted` block of a billed hosted answer (a hosted dry run is not billed and has none). */
export const HostedBlockSchema = v.looseObject({
  integrator_id: text,
  end_user_hash: about(nullableText, 'Salted hash of x-service-end-user; null without the header.'),
  price_atomic: about(text, 'What this call adds to the invoice, atomic USDC (0, 20000 or 10000).'),
  band: v.picklist(['free_allowance', 'standard', 'volume']),
  month: about(text, 'The calendar month (UTC) it is billed in, YYYY-MM.'),
  billed_on: v.literal('invoice'),
});

/** docs/api.md §2.5: who the answer was for. */
export const AccessSchema = v.looseObject({
  tier: v.picklist(['free', 'paid', 'exempt', 'hosted']),
  free_per_day: v.optional(v.number()),
  free_used_today: v.optional(v.number()),
  charged_usd: v.optional(text),
  tx: v.optional(text),
  hosted: v.optional(HostedBlockSchema),
});

/** docs/api.md §2.5: a hosted answer also gives its tier at the top level. */
const HostedTier = {
  access_tier: about(v.optional(v.literal('hosted')), 'Hosted answers only: the tier, also in access.tier.'),
};

/** An x402 v2 `PaymentRequired`: the 402 body, the `PAYMENT-REQUIRED` header, and the MCP payment-required result. */
export const PaymentRequiredSchema = v.looseObject({
  x402Version: v.literal(2),
  error: v.optional(text),
  resource: v.looseObject({ url: text, description: v.optional(text), mimeType: v.optional(text) }),
  accepts: v.array(
    v.looseObject({
      scheme: text,
      network: text,
      amount: about(text, 'Atomic units (USDC has 6 decimals): 20000 is USD 0.02.'),
      asset: text,
      payTo: text,
      maxTimeoutSeconds: v.number(),
      extra: v.optional(object),
    }),
  ),
  extensions: v.optional(object),
});

const Verdict = about(v.picklist(['pay', 'skip', 'recheck']), 'pay, skip or recheck (docs/api.md §3.1).');
const ReasonCode = v.picklist(REASONS);
/** docs/api.md §2.1 `sent_challenge`: present only when the caller sent `payment_required`. */
const SentChallenge = {
  sent_challenge: about(
    v.optional(
      v.looseObject({
        payment_required_sha256: about(text, 'SHA-256 of the RFC 8785 text of the challenge sent.'),
        selected_by: v.picklist(['caller', 'spotcheck']),
        selected_terms_sha256: about(
          nullableText,
          'The terms hash of the requirement judged (the one to sign), pay or not.',
        ),
      }),
    ),
    'Only when payment_required was sent: which challenge and which requirement the verdict is on.',
  ),
};
/** docs/api.md §2.1 `alternatives`: only on a skip of a check that named a task (`core/alternatives.ts`). */
const Alternatives = {
  alternatives: about(
    v.optional(
      v.nullable(
        v.array(
          v.looseObject({
            service_id: text,
            endpoint: text,
            network: text,
            price_atomic: about(text, 'Current price in atomic units of the network’s USDC.'),
            price_usd: nullableNumber,
            pass_rate: about(nullableNumber, 'Known-answer pass rate, as the lookup shows it.'),
            receipt_url: about(nullableText, 'The receipt of the service’s newest paid call.'),
          }),
        ),
      ),
    ),
    'Only on a skip of a check that named a task: up to 3 services of that task within claimed_price, ranked as GET /v1/lookup ranks them; null when the catalog could not be read. Not in the receipt.',
  ),
};
const ReceiptLink = {
  receipt_id: about(nullableText, 'Public receipt id, prefix sc-.'),
  receipt_url: about(nullableText, 'Free, public URL of the signed receipt.'),
};

/** docs/api.md §2.4: the free-tier and dry-run check answer. */
export const CheckAnswerFreeSchema = v.looseObject({
  verdict: Verdict,
  reason: about(text, 'The reason in plain words.'),
  reason_code: ReasonCode,
  payment_terms_sha256: about(nullableText, 'Null unless pay; always null in a dry run.'),
  ...ReceiptLink,
  pay_to_changed: v.nullable(v.boolean()),
  check_type: v.picklist(['dry-run', 'self-checked']),
  ...SentChallenge,
  ...Alternatives,
  access: AccessSchema,
  ...HostedTier,
});

/** docs/api.md §2.2: the one payment a router may sign (verdict `pay` only). */
export const PaymentObjectSchema = v.looseObject({
  network: text,
  asset: text,
  amount: v.looseObject({ atomic: text, usd: nullableNumber }),
  pay_to: text,
  deadline: text,
  deadline_source: v.picklist(['validBefore', 'maxTimeoutSeconds', 'default_60s']),
});

/** docs/api.md §2.1: the paid (and exempt) check answer. */
export const CheckAnswerPaidSchema = v.looseObject({
  verdict: Verdict,
  reason: ReasonCode,
  quoted_price_usd: nullableNumber,
  claimed_price_usd: nullableNumber,
  pay_to: nullableText,
  network: nullableText,
  asset: nullableText,
  expected_pay_to: nullableText,
  expected_network: nullableText,
  expected_source: v.nullable(v.picklist(['request', 'listing'])),
  payment: v.nullable(PaymentObjectSchema),
  probe: v.looseObject({ probed_at: text, cached: v.boolean(), cache_ttl_s: v.number() }),
  check_type: v.picklist(['dry-run', 'self-checked']),
  payment_terms_sha256: nullableText,
  ...ReceiptLink,
  pay_to_changed: v.nullable(v.boolean()),
  reason_code: ReasonCode,
  confidence: v.picklist(['high', 'medium', 'low']),
  history_observations: v.nullable(v.array(object)),
  history: v.nullable(object),
  quality: v.nullable(v.looseObject({ code: text, checks: object })),
  reputation: v.nullable(object),
  ...SentChallenge,
  ...Alternatives,
  access: AccessSchema,
  ...HostedTier,
});

/** Either check answer: the tier decides which (docs/api.md §2.1, §2.4). */
export const CheckAnswerSchema = v.union([CheckAnswerPaidSchema, CheckAnswerFreeSchema]);

/** docs/api.md §2.7: the payment-status result. */
export const PaymentStatusAnswerSchema = v.looseObject({
  id: about(text, 'Receipt id, prefix ps-.'),
  type: v.literal('payment-status'),
  status: v.picklist(['landed', 'not_landed', 'pending', 'canceled', 'unknown']),
  reason: text,
  safe_to_retry_same_payload: v.literal(true),
  safe_to_resign: about(
    v.boolean(),
    'True only when signing a new payment cannot double-pay (docs/api.md §3.2).',
  ),
  why: text,
  wait_until: nullableText,
  authorization: object,
  tx: v.nullable(object),
  terms_match: object,
  claim: object,
  cannot_know: v.array(text),
  finality: v.looseObject({
    confirmations: nullableNumber,
    min_confirmations: v.number(),
    reorg_safe: v.boolean(),
  }),
  rpc: v.looseObject({ sources: v.array(object), sources_agreed: v.number() }),
  receipt: about(object, 'The signed copy: the same facts plus kid and signature.'),
  receipt_url: text,
  access: AccessSchema,
  ...HostedTier,
});

/** docs/api.md §2.8: the lookup answer; entries are documented in `docs/lookup.md`. */
export const LookupAnswerSchema = v.looseObject({
  results: v.array(object),
  facts_only: v.array(object),
  access: AccessSchema,
});

/** `GET /v1/tasks`. */
export const TasksAnswerSchema = v.looseObject({
  tasks: v.array(v.looseObject({ name: text })),
});

/** One signed receipt (docs/api.md §2.6): a check (`sc-`) or a payment status (`ps-`). */
export const ReceiptSchema = v.looseObject({
  id: text,
  type: v.picklist(['check', 'payment-status']),
  issued_at: text,
  kid: v.optional(text),
  signature: v.optional(text),
});

/** `GET /v1/receipts`. */
export const ReceiptListSchema = v.looseObject({
  type: v.picklist(['all', 'dry-run', 'live']),
  page: v.number(),
  page_size: v.number(),
  total: v.number(),
  pages: v.number(),
  next: nullableText,
  prev: nullableText,
  receipts: v.array(v.looseObject({ id: text, type: text, issued_at: text, receipt_url: text })),
});

/** `GET /.well-known/jwks.json` (docs/api.md §2.6). */
export const JwksSchema = v.looseObject({
  keys: v.array(v.looseObject({ kty: v.literal('OKP'), crv: v.literal('Ed25519'), x: text, kid: text })),
});

/** The `verify_receipt` tool: the auditors' verifier's verdict on one receipt. */
export const VerifyAnswerSchema = v.looseObject({
  ok: v.boolean(),
  kid: v.optional(text),
  reason: about(v.optional(text), 'Why verification failed (verify/README.md lists the codes).'),
  receipt_id: nullableText,
  jwks_url: text,
});

/** `GET /healthz`. */
export const HealthSchema = v.looseObject({ ok: v.boolean(), version: text });

const PackFileSchema = v.looseObject({
  name: text,
  media_type: text,
  bytes: v.number(),
  content_base64: text,
});

/** docs/api.md §2.9: the setup pack, always paid. */
export const SetupPackAnswerSchema = v.looseObject({
  product: text,
  title: text,
  price_usdc: text,
  files: v.looseObject({
    prompts: v.array(PackFileSchema),
    templates: v.array(PackFileSchema),
    guide: PackFileSchema,
  }),
  access: AccessSchema,
});

/** `T` without the members `K`, keeping the index signature of a loose object (where `Omit` keeps only it). */
export type Without<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] };

/** An answer as a route makes it, before the access gate adds `access` (and `access_tier` when hosted). */
export type WithoutAccess<T> = Without<T, 'access' | 'access_tier'>;

/** The free-tier and dry-run check answer (docs/api.md §2.4). */
export type CheckAnswerFree = v.InferOutput<typeof CheckAnswerFreeSchema>;
/** The paid and exempt check answer (docs/api.md §2.1). */
export type CheckAnswerPaid = v.InferOutput<typeof CheckAnswerPaidSchema>;
/** The payment-status answer (docs/api.md §2.7). */
export type PaymentStatusAnswer = v.InferOutput<typeof PaymentStatusAnswerSchema>;
/** The lookup answer (docs/api.md §2.8). */
export type LookupAnswer = v.InferOutput<typeof LookupAnswerSchema>;
/** The setup pack (docs/api.md §2.9). */
export type SetupPackAnswer = v.InferOutput<typeof SetupPackAnswerSchema>;
/** One signed receipt (docs/api.md §2.6). */
export type ReceiptAnswer = v.InferOutput<typeof ReceiptSchema>;
/** The `verify_receipt` tool's verdict. */
export type VerifyAnswer = v.InferOutput<typeof VerifyAnswerSchema>;
/** The paid check answer as `core/check-answer.ts` assembles it: the route adds `reputation` and `access`. */
export type CheckFullAnswer = Without<CheckAnswerPaid, 'access' | 'access_tier' | 'reputation'>;
/** The free check answer as `core/check-answer.ts` assembles it: the access gate adds `access`. */
export type CheckFreeAnswer = WithoutAccess<CheckAnswerFree>;
