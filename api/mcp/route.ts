/**
 * `POST /mcp` (docs/api.md §1.7, §4): the Model Context Protocol over stateless Streamable HTTP with plain JSON answers
 * (docs/decisions.md "MCP"). A fresh low-level MCP server per request, whose tools call the app's own routes for the
 * caller (`calls.ts`), so a tool call is metered, identified and paid exactly like the HTTP route it stands for.
 * Calling `/mcp` itself is free. `GET` (which would open an endless event stream in stateless mode) and
 * `DELETE` (no sessions to end) answer 405.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { type H3, type H3Event, HTTPError } from 'h3';
import { presentedAsker } from '../access.ts';
import { MAX_BODY_BYTES } from '../body.ts';
import type { AppDeps } from '../deps.ts';
import { errorResponse } from '../errors.ts';
import { clientAddress } from '../identity.ts';
import { type CallContext, callTool } from './calls.ts';
import { routeErrorResult, X402_META } from './dispatch.ts';
import { sendFixedRpcErrors } from './rpc-errors.ts';
import { TOOLS } from './tools.ts';

export const MCP_PATH = '/mcp';

/**
 * One JSON Schema validator for every per-request server: by default each server builds its own Ajv instance
 * (with formats), which cost more than the rest of a tool call. The server only uses it for elicitation, which
 * Spotcheck never asks for.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

const INSTRUCTIONS =
  'Spotcheck checks x402 endpoints before you pay them. Call check_endpoint with the URL (and the price and ' +
  'wallet you were told) before paying; pay only on verdict pay, signing only the payment object it returns. ' +
  'After paying, if unsure whether it went through, call payment_status before signing again. Every answer ' +
  'names a signed public receipt. Paid tools use the x402 MCP transport (params._meta["x402/payment"]).';

/** Registers `/mcp` on the app; `app` is also what the tools call. */
export function mcpRoutes(app: H3, deps: AppDeps, apiVersion: string): void {
  app.post(MCP_PATH, (event) => handle(app, deps, apiVersion, event));
  const refuse = () =>
    errorResponse(405, 'method_not_allowed', 'The MCP endpoint is stateless: send JSON-RPC with POST.', {
      allow: 'POST',
    });
  app.get(MCP_PATH, refuse);
  app.delete(MCP_PATH, refuse);
}

async function handle(app: H3, deps: AppDeps, apiVersion: string, event: H3Event): Promise<Response> {
  // The key of the `/mcp` request is read once, as the routes read it: one that is malformed or not usable makes
  // every tool call of the request a 401, so no tool answers for free to a caller whose key is refused.
  const refused = keyRefusal(event.req.headers, deps);
  const context: CallContext = {
    fetch: (request) => app.fetch(request),
    origin: deps.baseUrl,
    caller: { address: clientAddress(event, deps.gate), headers: event.req.headers },
  };
  const server = new Server(
    { name: 'spotcheck', version: apiVersion },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: VALIDATOR },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(
    CallToolRequestSchema,
    (request) =>
      refused ??
      callTool(
        context,
        request.params.name,
        request.params.arguments ?? {},
        request.params._meta?.[X402_META.payment],
      ),
  );
  // No session id generator: stateless, every request stands alone.
  const transport = new WebStandardStreamableHTTPServerTransport({
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  sendFixedRpcErrors(transport);
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(event.req);
    // A tool answer is this caller's (free-quota counts, paid results): no shared cache may keep it.
    response.headers.set('cache-control', 'no-store');
    return response;
  } finally {
    await server.close();
  }
}

/** The tool result every call gets when the request's key is refused (a 401, as the route gives it); else null. */
function keyRefusal(headers: Headers, deps: AppDeps): CallToolResult | null {
  try {
    presentedAsker(headers, deps.gate, deps.hosted, true);
    return null;
  } catch (error) {
    if (!(error instanceof HTTPError)) throw error;
    const code = (error.data as { code?: unknown } | undefined)?.code;
    return routeErrorResult(error.status, { error: { code: String(code), message: error.message } });
  }
}
