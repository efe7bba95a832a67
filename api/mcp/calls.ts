/**
 * What each MCP tool does when called: which route it calls, with which arguments. Tools without a route of
 * their own (`verify_receipt`, `get_rules`) read through routes (the receipt, the keys document) or from `core/`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import { receiptUrlOf } from '../../core/receipt.ts';
import { ReceiptRequestSchema, VerifyReceiptRequestSchema } from '../../core/request-schemas.ts';
import { rulesDocument } from '../../core/rules.ts';
import { WatchEventsRequestSchema, WatchResumeRequestSchema } from '../../core/watch-schemas.ts';
import { verifyReceipt } from '../../verify/verify.ts';
import {
  type Caller,
  callRoute,
  type Fetch,
  jsonResult,
  type RouteCall,
  routeErrorResult,
  toolError,
  toolResultOf,
} from './dispatch.ts';
import { TOOL_NAMES, type ToolName } from './tools.ts';

/** What a tool call needs: the app to call, its public origin, and who is calling. */
export type CallContext = { fetch: Fetch; origin: string; caller: Caller };

const CHECK = '/v1/products/endpoint-spot-check';
const PAYMENT_STATUS = '/v1/products/payment-status';
const WATCHES = '/v1/watches';

/**
 * Runs tool `name` with `args`; `payment` is `params._meta["x402/payment"]` when the caller sent one. A call that
 * throws (a bug, or a failure inside the service) is logged here and answered as a route's 500 is, with a generic
 * message and the code `internal_error`: the exception's text never reaches the caller, and the MCP server never
 * turns it into a JSON-RPC error message.
 */
export async function callTool(
  context: CallContext,
  name: string,
  args: Record<string, unknown>,
  payment: unknown,
): Promise<CallToolResult> {
  try {
    return await runTool(context, name, args, payment);
  } catch (error) {
    console.error(`[spotcheck] [mcp] tool ${JSON.stringify(name).slice(0, 80)} failed`, error);
    return routeErrorResult(500, {
      error: { code: 'internal_error', message: 'Something went wrong on our side; nothing was charged.' },
    });
  }
}

async function runTool(
  context: CallContext,
  name: string,
  args: Record<string, unknown>,
  payment: unknown,
): Promise<CallToolResult> {
  if (!isToolName(name)) return toolError('unknown_tool', `No tool is named ${name}.`);
  const route = (call: RouteCall, pay: unknown = undefined) =>
    callRoute(context.fetch, context.origin, context.caller, call, pay);

  switch (name) {
    case 'check_endpoint':
      return toolResultOf(await route({ method: 'POST', path: CHECK, body: args, hosted: true }, payment));
    case 'payment_status':
      return toolResultOf(
        await route({ method: 'POST', path: PAYMENT_STATUS, body: args, hosted: true }, payment),
      );
    case 'lookup': {
      const query = queryOf(args);
      if (query === null) return badArguments('lookup takes strings and numbers only.');
      return toolResultOf(await route({ method: 'GET', path: '/v1/lookup', query }, payment));
    }
    case 'list_tasks':
      return toolResultOf(await route({ method: 'GET', path: '/v1/tasks' }));
    case 'get_receipt': {
      const parsed = v.safeParse(ReceiptRequestSchema, args);
      if (!parsed.success) return badArguments('Send id (sc-… or ps-…) or url.');
      const { id, url } = parsed.output;
      if (id !== undefined) return toolResultOf(await route({ method: 'GET', path: receiptPath(id) }));
      if (url !== undefined) {
        return toolResultOf(await route({ method: 'GET', path: '/v1/receipts/by-url', query: { url } }));
      }
      return toolError('missing_id_or_url', 'Send id (sc-… or ps-…) or url.');
    }
    case 'verify_receipt':
      return verify(args, route, context.origin);
    case 'get_rules':
      return rules();
    case 'create_watch':
      return toolResultOf(await route({ method: 'POST', path: WATCHES, body: args, hosted: true }, payment));
    case 'watch_events':
      return watchEvents(args, route);
    case 'resume_watch':
      return resumeWatch(args, route);
  }
}

/** `resume_watch`: the resume route of the watch, with its token as the header the route reads. */
async function resumeWatch(
  args: Record<string, unknown>,
  route: (call: RouteCall) => Promise<Response>,
): Promise<CallToolResult> {
  const parsed = v.safeParse(WatchResumeRequestSchema, args);
  if (!parsed.success) return badArguments('Send watch_id (wa-…) and token.');
  const { watch_id: id, token } = parsed.output;
  return toolResultOf(
    await route({ method: 'POST', path: `${WATCHES}/${id}/resume`, headers: { 'x-watch-token': token } }),
  );
}

/** `watch_events`: the events route of the watch, with its token as the header the route reads. */
async function watchEvents(
  args: Record<string, unknown>,
  route: (call: RouteCall) => Promise<Response>,
): Promise<CallToolResult> {
  const parsed = v.safeParse(WatchEventsRequestSchema, args);
  if (!parsed.success)
    return badArguments('Send watch_id (wa-…) and token, and optionally limit and before.');
  const { watch_id: id, token, limit, before } = parsed.output;
  const query: Record<string, string> = {};
  if (limit !== undefined) query.limit = String(limit);
  if (before !== undefined) query.before = before;
  return toolResultOf(
    await route({
      method: 'GET',
      path: `${WATCHES}/${id}/events`,
      query,
      headers: { 'x-watch-token': token },
    }),
  );
}

async function verify(
  args: Record<string, unknown>,
  route: (call: RouteCall) => Promise<Response>,
  origin: string,
): Promise<CallToolResult> {
  const parsed = v.safeParse(VerifyReceiptRequestSchema, args);
  if (!parsed.success) return badArguments('Send id (sc-… or ps-…) or receipt (an object).');
  let receipt: unknown = parsed.output.receipt;
  if (receipt === undefined) {
    if (parsed.output.id === undefined) return toolError('missing_id_or_receipt', 'Send id or receipt.');
    const answer = await route({ method: 'GET', path: receiptPath(parsed.output.id) });
    if (!answer.ok) return toolResultOf(answer);
    receipt = await answer.json();
  }
  const keys = await route({ method: 'GET', path: '/.well-known/jwks.json' });
  if (!keys.ok) return toolResultOf(keys);
  const result = await verifyReceipt(receipt, await keys.json());
  const id = (receipt as { id?: unknown }).id;
  return jsonResult(
    {
      ...result,
      receipt_id: typeof id === 'string' ? id : null,
      jwks_url: new URL('/.well-known/jwks.json', origin).href,
    },
    false,
  );
}

let rulesResult: CallToolResult | null = null;
/** The rules do not change while the service runs: the result is built once. */
function rules(): CallToolResult {
  rulesResult ??= jsonResult(rulesDocument(), false);
  return rulesResult;
}

function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** The receipt route's path for `id`: the one URL template with an empty origin, the id encoded. */
function receiptPath(id: string): string {
  return receiptUrlOf('', encodeURIComponent(id));
}

/** Tool arguments as query parameters: strings, finite numbers and booleans; null when anything else is sent. */
function queryOf(args: Record<string, unknown>): Record<string, string> | null {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' || typeof value === 'boolean') query[name] = String(value);
    else if (typeof value === 'number' && Number.isFinite(value)) query[name] = String(value);
    else return null;
  }
  return query;
}

function badArguments(message: string): CallToolResult {
  return toolError('bad_arguments', message);
}
