/**
 * `GET /openapi.json` (docs/api.md §4, §9.1): OpenAPI 3.1, version 0.44.0, generated from the operations table
 * (`openapi-operations.ts`) and its valibot schemas. The lookup route is declared without security (docs/api.md §5.1);
 * the check and payment status accept service keys (`Authorization: Bearer` or `x-service-key`, docs/api.md §5.4) and
 * stay callable without one; the integrator's account and invoices require one. Each operation that sells through
 * x402 carries `x-payment-info` as x402 discovery tools read it (x402scan `docs/DISCOVERY.md`: `protocols`,
 * `pricingMode`, `price`), plus the network, asset and atomic amount of the payment requirement, and a 402
 * response; an invoice, priced at its own total, is `pricingMode: "quote"`.
 */
import type { H3 } from 'h3';
import { atomicToUsd } from '../core/amount.ts';
import { ErrorBodySchema, PaymentRequiredSchema } from '../core/answer-schemas.ts';
import { BASE, BASE_USDC } from '../core/networks.ts';
import { type JsonSchema, jsonSchemaOf, propertiesOf } from './json-schema.ts';
import { MCP_PATH } from './mcp/route.ts';
import { mcpPathItem, refusedOperation } from './openapi-mcp.ts';
import { DATABASE_503, ERROR_REF, JSON_TYPE, type Operation } from './openapi-model.ts';
import { OPERATIONS } from './openapi-operations.ts';
import { WATCH_ID } from './openapi-watches.ts';
import { offerPriceAtomic } from './x402/offers.ts';

export const OPENAPI_PATH = '/openapi.json';

const PAYMENT_REQUIRED_REF = { $ref: '#/components/schemas/PaymentRequired' };
const KEY_REQUIRED = [{ serviceKeyBearer: [] }, { serviceKey: [] }];
const SECURITY = { none: [], optional: [{}, ...KEY_REQUIRED], required: KEY_REQUIRED };
/** What a hosted answer carries (docs/api.md §8, draft-ietf-httpapi-ratelimit-headers). */
const RATE_HEADERS = {
  RateLimit: header('Hosted calls: "hosted";r=<calls left>;t=<seconds until one frees>.'),
  'RateLimit-Policy': header('Hosted calls: "hosted";q=120;w=60 (120 calls a minute per key).'),
};

/** Registers `GET /openapi.json`; the document is built once. */
export function openApiRoutes(app: H3, baseUrl: string, apiVersion: string): void {
  const document = openApiDocument(baseUrl, apiVersion);
  app.get(OPENAPI_PATH, (event) => {
    event.res.headers.set('cache-control', 'public, max-age=300');
    return document;
  });
}

/** The OpenAPI document of the service served at `baseUrl`. */
export function openApiDocument(baseUrl: string, apiVersion: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    paths[operation.path] = { ...paths[operation.path], [operation.method]: describe(operation) };
  }
  paths[MCP_PATH] = mcpPathItem();
  // Watches are never listed, and a resume changes state: a GET of either is refused (api/routes/watches.ts).
  paths['/v1/watches'] = {
    ...paths['/v1/watches'],
    get: refusedOperation(
      'listWatches',
      'Refused: watches are not listed; make one with POST, read one by its id.',
    ),
  };
  paths['/v1/watches/{watch_id}/resume'] = {
    ...paths['/v1/watches/{watch_id}/resume'],
    get: {
      ...refusedOperation(
        'resumeWatchGet',
        'Refused: resuming changes a watch; send POST with its x-watch-token.',
      ),
      parameters: [
        {
          name: WATCH_ID.name,
          description: WATCH_ID.description,
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: WATCH_ID.pattern },
        },
      ],
    },
  };
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'openapi',
      summary: 'This document.',
      security: [],
      responses: {
        200: { description: 'OpenAPI 3.1', content: { [JSON_TYPE]: { schema: { type: 'object' } } } },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Spotcheck',
      version: apiVersion,
      summary: 'Pre-payment checks of x402 endpoints, signed receipts, payment status and a catalog lookup.',
      description:
        'Before an agent pays a third-party x402 endpoint, Spotcheck probes it unpaid and answers pay, skip or ' +
        'recheck with a signed public receipt. Paid calls use x402 (exact scheme, USDC on Base); free quotas ' +
        'come first. Errors are {"error":{"code","message"}} with a stable snake_case code.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: baseUrl.replace(/\/+$/, '') }],
    components: {
      securitySchemes: {
        serviceKeyBearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A hosted-mode integrator key (sck_live_<id>_<secret>) or an exempt key, as a bearer token: exactly ' +
            '`Bearer <key>` (the scheme in any case, one space, nothing after); any other Authorization is a 401 bad_key.',
        },
        serviceKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-service-key',
          description: 'The same key in the x-service-key header.',
        },
      },
      schemas: { Error: jsonSchemaOf(ErrorBodySchema), PaymentRequired: jsonSchemaOf(PaymentRequiredSchema) },
    },
    paths,
  };
}

function describe(operation: Operation): Record<string, unknown> {
  const responses: Record<string, unknown> = { [operation.success ?? 200]: answerOf(operation) };
  if (operation.offer) {
    responses[402] = {
      description: operation.freeQuota
        ? 'Payment required: the free calls of the UTC day are used up, or a payment was refused.'
        : 'Payment required (x402 v2): the requirement is in the PAYMENT-REQUIRED header and, identically, the body.',
      headers: {
        'PAYMENT-REQUIRED': header('Base64 JSON PaymentRequired (x402 v2).'),
        ...(operation.keys === 'optional'
          ? { 'x-service-hosted': header('credit_limit: the integrator reached its monthly credit limit.') }
          : {}),
      },
      content: { [JSON_TYPE]: { schema: PAYMENT_REQUIRED_REF } },
    };
  }
  const errors: Record<string, string> = { ...operation.errors };
  if (operation.offer) {
    errors[500] =
      '`internal_error`: the request failed on our side and nothing was charged; or, after a landed settlement, the ' +
      'answer could not be recorded, and the message and the PAYMENT-RESPONSE header name the transaction.';
  }
  if (operation.needsDatabase !== false) {
    errors[503] = errors[503] ? `${errors[503]} Or ${DATABASE_503}` : DATABASE_503;
  }
  for (const [status, text] of Object.entries(errors)) {
    // A browser gets every error as a page with the same status and code (`api/html-pages.ts`).
    const content: Record<string, unknown> = { [JSON_TYPE]: { schema: ERROR_REF }, 'text/html': HTML_PAGE };
    responses[status] = {
      description: text,
      content,
      ...(status === '429'
        ? { headers: { 'Retry-After': header('Seconds until a call is allowed again.') } }
        : {}),
      ...(status === '503' && operation.needsDatabase !== false
        ? {
            headers: {
              'Retry-After': header('With `database_unavailable`: seconds to wait before trying again.'),
            },
          }
        : {}),
    };
  }
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    security: SECURITY[operation.keys ?? 'none'],
    ...inputOf(operation),
    responses,
    ...(operation.offer ? { 'x-payment-info': paymentInfo(operation.offer) } : {}),
  };
}

/** The 200 of an operation: its JSON answer or its media, and the headers a paid or hosted answer carries. */
function answerOf(operation: Operation): Record<string, unknown> {
  const content = operation.answer
    ? { [JSON_TYPE]: { schema: jsonSchemaOf(operation.answer) } }
    : { [operation.media ?? 'application/octet-stream']: { schema: mediaSchema(operation.media) } };
  if (operation.html) Object.assign(content, { 'text/html': HTML_PAGE });
  const headers: Record<string, unknown> = {
    ...(operation.offer
      ? { 'PAYMENT-RESPONSE': header('Base64 JSON settlement of a paid call (x402 v2).') }
      : {}),
    ...(operation.keys === 'optional' ? RATE_HEADERS : {}),
    ...Object.fromEntries(
      Object.entries(operation.answerHeaders ?? {}).map(([name, text]) => [name, header(text)]),
    ),
  };
  return {
    description: 'The answer.',
    content,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

/** What a browser gets instead of JSON where `Accept` prefers HTML. */
const HTML_PAGE = {
  schema: { type: 'string', description: 'The page a browser gets (Accept preferring text/html).' },
};

/** Text media are strings; images and PDFs are bytes (OpenAPI 3.1: a binary body has no type). */
function mediaSchema(media: string | undefined): Record<string, unknown> {
  return media?.startsWith('text/') || media === 'image/svg+xml'
    ? { type: 'string' }
    : { contentMediaType: media };
}

function inputOf(operation: Operation): Record<string, unknown> {
  const parameters: unknown[] = [];
  if (operation.pathParameter) {
    const { name, description, pattern } = operation.pathParameter;
    parameters.push({ name, in: 'path', required: true, description, schema: { type: 'string', pattern } });
  }
  for (const { name, description, pattern } of operation.queryParameters ?? []) {
    parameters.push({ name, in: 'query', required: false, description, schema: { type: 'string', pattern } });
  }
  for (const { name, description, pattern } of operation.headerParameters ?? []) {
    parameters.push({ name, in: 'header', required: true, description, schema: { type: 'string', pattern } });
  }
  if (operation.input && operation.method === 'post') {
    return {
      ...(parameters.length > 0 ? { parameters } : {}),
      requestBody: { required: false, content: { [JSON_TYPE]: { schema: jsonSchemaOf(operation.input) } } },
    };
  }
  if (operation.input) {
    const { properties, required } = propertiesOf(operation.input);
    for (const [name, schema] of Object.entries(properties)) {
      const { description, ...rest } = schema as JsonSchema & { description?: string };
      parameters.push({
        name,
        in: 'query',
        required: required.includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  return parameters.length > 0 ? { parameters } : {};
}

/**
 * `x-payment-info` of an offer: the x402scan fields, plus the terms a buyer will see in the 402. An invoice has no
 * one price: each is sold at its own total, which only its 402 states (x402scan's `pricingMode: "quote"`).
 */
function paymentInfo(name: NonNullable<Operation['offer']>): Record<string, unknown> {
  const terms = { currency: 'USD', scheme: 'exact', network: BASE, asset: BASE_USDC };
  if (name === 'invoice') {
    return {
      protocols: ['x402'],
      pricingMode: 'quote',
      ...terms,
      description:
        "The invoice's total, in USDC on Base to the service wallet; the 402 states the exact amount.",
    };
  }
  const priceAtomic = offerPriceAtomic(name);
  return {
    protocols: ['x402'],
    pricingMode: 'fixed',
    price: String(atomicToUsd(priceAtomic, 6)),
    ...terms,
    amount: priceAtomic,
  };
}

function header(description: string): Record<string, unknown> {
  return { description, schema: { type: 'string' } };
}
