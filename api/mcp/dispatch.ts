/**
 * How an MCP tool call reaches the service: as an internal web `Request` to the app's own HTTP route, so metering,
 * identity, service keys and x402 settlement are the route's, by construction. The answer comes back as an MCP
 * tool result, with payments bound as the x402 MCP transport's tool-result binding (x402 repository,
 * `specs/transports-v2/mcp.md`):
 * - a 402 becomes `isError: true` with the `PaymentRequired` in `structuredContent` and, as JSON, in
 *   `content[0].text`;
 * - the payment arrives in `params._meta["x402/payment"]` and is handed to the route as `PAYMENT-SIGNATURE`;
 * - a settlement (`PAYMENT-RESPONSE`) goes back in `result._meta["x402/payment-response"]`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { SERVICE_KEY_PREFIX } from '../../core/service-key.ts';
import { bearerToken } from '../credentials.ts';
import { withClientAddress } from '../identity.ts';

/** The MCP metadata keys of the x402 tool-result binding. */
export const X402_META = { payment: 'x402/payment', paymentResponse: 'x402/payment-response' } as const;

/** Answer headers an agent may act on, relayed as `_meta["spotcheck/<name>"]`: retry timing, hosted state. */
const RELAYED = ['retry-after', 'x-service-hosted', 'ratelimit', 'ratelimit-policy'] as const;

/** The headers a tool call carries over from the MCP request: service keys and the end-user tag (docs/api.md §5.4). */
const CARRIED = ['authorization', 'x-service-key', 'x-service-end-user'] as const;

/** Who is calling over MCP: what the internal request carries on their behalf. */
export type Caller = {
  /** The client address as the `/mcp` request's own transport gave it (`api/identity.ts`). */
  address: string;
  headers: Headers;
};

/** An internal call of one route. */
export type RouteCall = {
  method: 'GET' | 'POST';
  path: string;
  /** The route takes integrator keys (the check and payment status, docs/api.md §5.4); other routes are called without
   *  them, as an integrator calls them over HTTP, so one MCP client configured with its key can use every tool. */
  hosted?: boolean;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
  /** Headers of the call itself (a watch's `x-watch-token`), set after those carried from the MCP request. */
  headers?: Record<string, string>;
};

/** Answers a web `Request` the way the app does (`app.fetch`). */
export type Fetch = (request: Request) => Response | Promise<Response>;

/**
 * Calls a route for `caller`. `payment` is the tool call's `_meta["x402/payment"]`, passed on untouched as the
 * `PAYMENT-SIGNATURE` header: the route's seller decides whether it is valid, exactly as over HTTP.
 */
export function callRoute(
  fetch: Fetch,
  origin: string,
  caller: Caller,
  call: RouteCall,
  payment: unknown,
): Promise<Response> {
  const url = new URL(call.path, origin);
  for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
  const headers = new Headers({ accept: 'application/json' });
  for (const name of CARRIED) {
    const value = caller.headers.get(name);
    if (value !== null && (call.hosted === true || !isIntegratorHeader(name, value)))
      headers.set(name, value);
  }
  for (const [name, value] of Object.entries(call.headers ?? {})) headers.set(name, value);
  if (payment !== undefined) headers.set('payment-signature', paymentHeader(payment));
  let body: string | undefined;
  if (call.method === 'POST') {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(call.body ?? {});
  }
  const request = new Request(url, { method: call.method, headers, ...(body ? { body } : {}) });
  return Promise.resolve(fetch(withClientAddress(request, caller.address)));
}

/** An integrator key (`sck_live_…`, in either header) or the end-user tag, which only hosted routes take. */
function isIntegratorHeader(name: (typeof CARRIED)[number], value: string): boolean {
  if (name === 'x-service-end-user') return true;
  const key = name === 'authorization' ? (bearerToken(value) ?? '') : value;
  return key.startsWith(SERVICE_KEY_PREFIX);
}

/** The tool result of a route's answer. */
export async function toolResultOf(response: Response): Promise<CallToolResult> {
  const meta: Record<string, unknown> = {};
  const settlement = response.headers.get('payment-response');
  if (settlement !== null)
    meta[X402_META.paymentResponse] = decodeOrNull(decodePaymentResponseHeader, settlement);
  for (const name of RELAYED) {
    const value = response.headers.get(name);
    if (value !== null) meta[`spotcheck/${name}`] = value;
  }
  const withMeta = (result: CallToolResult): CallToolResult => {
    const merged = { ...result._meta, ...meta };
    return Object.keys(merged).length > 0 ? { ...result, _meta: merged } : result;
  };

  const body = await readJson(response);
  if (response.status === 402) {
    // The seller's 402 body is the PaymentRequired itself (docs/api.md §5.2); the header is read only when it is not.
    const header = response.headers.get('payment-required');
    const required =
      isPaymentRequired(body) || header === null
        ? body
        : (decodeOrNull(decodePaymentRequiredHeader, header) ?? body);
    return withMeta(jsonResult(required, true));
  }
  if (response.ok) return withMeta(jsonResult(body, false));
  return withMeta(routeErrorResult(response.status, body));
}

/**
 * A route's error as a tool result: the error body as text only (the tool's output schema describes answers, not
 * errors), with its status in `_meta["spotcheck/http-status"]`.
 */
export function routeErrorResult(status: number, body: unknown): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    _meta: { 'spotcheck/http-status': status },
  };
}

/** A tool result whose structured content is `value` and whose first text block is the same JSON. */
export function jsonResult(value: unknown, isError: boolean): CallToolResult {
  const structured =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  return {
    ...(isError ? { isError: true } : {}),
    structuredContent: structured,
    content: [{ type: 'text', text: JSON.stringify(structured) }],
  };
}

/** A tool error in the house error shape, for arguments a tool refuses before any route is called. */
export function toolError(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message } }) }] };
}

/**
 * The header value of a `_meta["x402/payment"]` member. The binding sends the `PaymentPayload` object; a
 * string is taken as an already-encoded header value. Anything else is passed on as its JSON, which the
 * seller refuses (`invalid_payment_header`) like any malformed header.
 */
function paymentHeader(payment: unknown): string {
  if (typeof payment === 'string') return payment;
  if (payment !== null && typeof payment === 'object') {
    try {
      return encodePaymentSignatureHeader(payment as PaymentPayload);
    } catch {
      return 'invalid';
    }
  }
  return 'invalid';
}

function isPaymentRequired(value: unknown): boolean {
  const candidate = value as { x402Version?: unknown; accepts?: unknown } | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    Array.isArray(candidate.accepts) &&
    candidate.x402Version === 2
  );
}

function decodeOrNull<T>(decode: (value: string) => T, value: string): T | null {
  try {
    return decode(value);
  } catch {
    return null;
  }
}

/** The route's JSON answer; an answer that is not JSON is logged and reported without its text (it may be a trace). */
async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    console.error(
      `[spotcheck] [mcp] a route answered ${response.status} without JSON: ${text.slice(0, 200)}`,
    );
    return { error: { code: 'bad_answer', message: 'The service gave an answer that is not JSON.' } };
  }
}
