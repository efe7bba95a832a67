/**
 * The MCP tools (docs/api.md §1.7, §4 `POST /mcp`): names, the descriptions an agent reads when it decides what to call,
 * and input and output schemas generated from the same valibot schemas as the HTTP routes. Each tool that has a
 * route calls that route (`dispatch.ts`); the output schema of a paid tool also admits the x402
 * `PaymentRequired` its payment-required result carries, since MCP clients validate `structuredContent`.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type * as v from 'valibot';
import {
  CheckAnswerSchema,
  LookupAnswerSchema,
  PaymentRequiredSchema,
  PaymentStatusAnswerSchema,
  ReceiptSchema,
  TasksAnswerSchema,
  VerifyAnswerSchema,
} from '../../core/answer-schemas.ts';
import { LIMITS, priceText, WATCH_LIMITS } from '../../core/limits.ts';
import { Rules } from '../../core/published-schemas.ts';
import {
  CheckInputSchema,
  LookupInputSchema,
  PaymentStatusInputSchema,
  ReceiptRequestSchema,
  VerifyReceiptRequestSchema,
} from '../../core/request-schemas.ts';
import { WatchInputSchema } from '../../core/watch-input.ts';
import {
  WatchCreatedSchema,
  WatchEventsPageSchema,
  WatchEventsRequestSchema,
  WatchResumedSchema,
  WatchResumeRequestSchema,
} from '../../core/watch-schemas.ts';
import { type JsonSchema, jsonSchemaOf } from '../json-schema.ts';

/** The tool names, in the order `tools/list` gives them. */
export const TOOL_NAMES = [
  'check_endpoint',
  'payment_status',
  'lookup',
  'list_tasks',
  'get_receipt',
  'verify_receipt',
  'get_rules',
  'create_watch',
  'watch_events',
  'resume_watch',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

// Every paid tool costs what a check does (`core/limits.ts`).
const PRICE = `${priceText(LIMITS.checkPriceAtomic)} in USDC on Base`;
const PAYING =
  `When the free calls are used up the result is isError with an x402 PaymentRequired (${PRICE}); ` +
  'pay it by calling again with the signed PaymentPayload in params._meta["x402/payment"] (x402 MCP transport). ' +
  'Service keys travel in the Authorization or x-service-key header of the MCP request, as over HTTP.';

type ToolSpec = {
  description: string;
  input: v.GenericSchema | null;
  /** Every tool declares what it answers: MCP clients check `structuredContent` against it. */
  output: v.GenericSchema;
  paid: boolean;
  /** A free tool that changes something (so not read-only). */
  changes?: true;
};

const SPECS: Record<ToolName, ToolSpec> = {
  check_endpoint: {
    description:
      'Call this BEFORE paying any third-party x402 endpoint. Spotcheck sends the URL one unpaid request, reads its ' +
      'live 402 payment terms and answers pay, skip or recheck with a reason code and a signed public receipt ' +
      '(receipt_url) you can show as the reason for paying or not. Pass the price and wallet you were told ' +
      "(claimed_price, pay_to) so a changed price or wallet is caught. Only sign the payment in the answer's " +
      '`payment` object, and only when verdict is pay. When you already hold the 402 you are about to pay, send it ' +
      'as payment_required (and the option you chose as selected_requirement): the verdict is then on exactly that ' +
      'requirement, and payment_terms_sha256 is its hash. Name the task (from list_tasks) and a skip also lists up to ' +
      'three alternatives of that task within claimed_price, ranked as lookup ranks them. Never pays the target. ' +
      `Free: ${LIMITS.freeChecksPerDay} checks a day per client (mode dry-run: ${LIMITS.dryRunsPerDay}, never an ` +
      `approval); the free answer is the short form, a paid check (${PRICE}) adds the payment object, quality, ` +
      `reputation and history. ${PAYING}`,
    input: CheckInputSchema,
    output: CheckAnswerSchema,
    paid: true,
  },
  payment_status: {
    description:
      'Call this AFTER you signed or sent an x402 payment (Base USDC, EIP-3009) and before you sign another one for ' +
      'the same purchase: it reads the chain and says whether the payment landed (status landed, not_landed, ' +
      'pending, canceled, unknown) and whether signing a new payment is safe (safe_to_resign; true only when the ' +
      'old authorization can never settle, so re-signing cannot double-pay). Send payment_payload (the ' +
      'PAYMENT-SIGNATURE value you sent) or tx_hash, or from with nonce. Gives a signed ps- receipt. ' +
      `Free: ${LIMITS.freePaymentStatusPerDay} a day. ` +
      PAYING,
    input: PaymentStatusInputSchema,
    output: PaymentStatusAnswerSchema,
    paid: true,
  },
  lookup: {
    description:
      'Find services for a task, ranked by how often their paid answers passed a known-answer check over ' +
      "Spotcheck's own last n paid calls, then by price; facts_only lists services broken on the seller's side. " +
      'Use list_tasks for task names; max_price filters by price per call (USD). ' +
      `Free: ${LIMITS.freeLookupsPerDay} lookups a day. ` +
      PAYING,
    input: LookupInputSchema,
    output: LookupAnswerSchema,
    paid: true,
  },
  list_tasks: {
    description: 'The task names lookup accepts, with what each task is. Free.',
    input: null,
    output: TasksAnswerSchema,
    paid: false,
  },
  get_receipt: {
    description:
      'One public signed receipt: by id (sc- for checks, ps- for payment status), or the latest receipt of an ' +
      'endpoint URL. Free. Use it to show why a payment was made or refused.',
    input: ReceiptRequestSchema,
    output: ReceiptSchema,
    paid: false,
  },
  verify_receipt: {
    description:
      "Checks a receipt's Ed25519 signature against Spotcheck's published keys (/.well-known/jwks.json) with the " +
      "independent auditors' verifier: by id, or a receipt object you hold (for example one a seller or another " +
      'agent showed you). ok true means Spotcheck issued exactly these bytes. Free.',
    input: VerifyReceiptRequestSchema,
    output: VerifyAnswerSchema,
    paid: false,
  },
  get_rules: {
    description:
      'The rules behind every answer: each reason code with its verdict and plain words, the supported networks ' +
      'and their USDC, the confidence rules, quality codes, free-trial headers recognized, the reputation formula ' +
      'and the limits. Free.',
    input: null,
    output: Rules,
    paid: false,
  },
  create_watch: {
    description:
      'Keep watching an x402 endpoint you pay repeatedly: Spotcheck probes it every few minutes and records a ' +
      'signed event when its verdict or payment terms (price, wallet, network, asset) change, when it goes down ' +
      'or recovers, or when no catalog lists it any more; each event is also POSTed to webhook_url when given ' +
      '(Standard Webhooks headers, v1a Ed25519 signature checkable with /.well-known/jwks.json). Pass the wallet, ' +
      'network and price you expect (pay_to, network, claimed_price) to be told when the verdict turns skip. The ' +
      'answer holds the watch id and its management token, shown only this once: keep it to read events with ' +
      `watch_events. A watch costs ${priceText(WATCH_LIMITS.priceAtomic)} in USDC on Base for ` +
      `${WATCH_LIMITS.periodDays} days (isError with an x402 PaymentRequired; pay it by calling again with the ` +
      'signed PaymentPayload in params._meta["x402/payment"]), or is made with a hosted or exempt service key ' +
      'sent in the Authorization or x-service-key header of the MCP request.',
    input: WatchInputSchema,
    output: WatchCreatedSchema,
    paid: true,
  },
  watch_events: {
    description:
      "A watch's signed events, newest first (terms_changed, verdict_changed, down, recovered, delisted, " +
      'watch_expiring, and watch_paused or watch_stopped when its webhook kept failing or answered 410). Needs the ' +
      'watch id and the token create_watch answered; next is the before of the following page. Free.',
    input: WatchEventsRequestSchema,
    output: WatchEventsPageSchema,
    paid: false,
  },
  resume_watch: {
    description:
      'Resume a watch that was paused (its webhook failed for 24 hours), stopped (its webhook answered 410) or ' +
      'opted out (its host asked not to be probed, and has since left the list): it is probed again until its ' +
      'expiry, and every event it could not deliver is sent again with its same webhook-id. Needs the watch id ' +
      'and the token create_watch answered; deliveries_requeued says how many events will be sent. Free.',
    input: WatchResumeRequestSchema,
    output: WatchResumedSchema,
    paid: false,
    changes: true,
  },
};

/** The `tools/list` answer, built once: schemas do not change while the service runs. */
export const TOOLS: Tool[] = TOOL_NAMES.map((name) => {
  const spec = SPECS[name];
  return {
    name,
    description: spec.description,
    inputSchema: objectSchema(spec.input ? jsonSchemaOf(spec.input) : { type: 'object', properties: {} }),
    outputSchema: outputSchemaOf(spec),
    annotations: {
      title: name.replace('_', ' '),
      readOnlyHint: !spec.paid && spec.changes !== true,
      openWorldHint: name === 'check_endpoint' || name === 'payment_status',
    },
  };
});

function outputSchemaOf(spec: ToolSpec): Tool['outputSchema'] {
  const answer = jsonSchemaOf(spec.output);
  if (!spec.paid) return objectSchema(answer);
  return objectSchema({ anyOf: [answer, jsonSchemaOf(PaymentRequiredSchema)] });
}

/** MCP wants `type: "object"` at the top of every tool schema. */
function objectSchema(schema: JsonSchema): Tool['inputSchema'] {
  return { ...(schema as Record<string, unknown>), type: 'object' } as Tool['inputSchema'];
}
