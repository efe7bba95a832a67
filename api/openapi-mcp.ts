/**
 * `POST /mcp` in `/openapi.json` (docs/api.md §4): one JSON-RPC operation (the tools and their schemas are MCP's own
 * `tools/list`), and `GET` and `DELETE`, which answer 405 in stateless mode.
 */
import * as v from 'valibot';
import { jsonSchemaOf } from './json-schema.ts';
import { codes, ERROR_REF, JSON_TYPE } from './openapi-model.ts';

/** An operation that only answers 405 (`method_not_allowed`), with why. */
export function refusedOperation(operationId: string, summary: string): Record<string, unknown> {
  return {
    operationId,
    summary,
    security: [],
    responses: {
      405: {
        description: codes('method_not_allowed'),
        content: { [JSON_TYPE]: { schema: ERROR_REF } },
      },
    },
  };
}

/** The path item of `/mcp`. */
export function mcpPathItem(): Record<string, unknown> {
  const why =
    'Refused: the MCP endpoint is stateless (no event stream, no session); send JSON-RPC with POST.';
  return {
    post: mcpOperation(),
    get: refusedOperation('mcpGet', why),
    delete: refusedOperation('mcpDelete', why),
  };
}

function mcpOperation(): Record<string, unknown> {
  const jsonRpc = v.looseObject({ jsonrpc: v.literal('2.0') });
  return {
    operationId: 'mcp',
    summary: 'The MCP endpoint (JSON-RPC 2.0, stateless Streamable HTTP, JSON answers). Free to call.',
    description:
      'Tools: check_endpoint, payment_status, lookup, list_tasks, get_receipt, verify_receipt, get_rules, ' +
      'create_watch, watch_events, resume_watch (tools/list ' +
      'gives their schemas). Tool calls are metered and paid like their HTTP routes; payments use the x402 MCP ' +
      'transport. Send Accept: application/json, text/event-stream. GET and DELETE answer 405.',
    security: [],
    requestBody: { required: true, content: { [JSON_TYPE]: { schema: jsonSchemaOf(jsonRpc) } } },
    responses: {
      200: { description: 'JSON-RPC answer.', content: { [JSON_TYPE]: { schema: jsonSchemaOf(jsonRpc) } } },
      202: { description: 'A notification was accepted.' },
      400: {
        description: 'JSON-RPC parse error.',
        content: { [JSON_TYPE]: { schema: jsonSchemaOf(jsonRpc) } },
      },
      406: { description: 'The Accept header does not take both application/json and text/event-stream.' },
      413: { description: 'The body is over 64 KiB.' },
      415: { description: 'The Content-Type is not application/json.' },
    },
  };
}
