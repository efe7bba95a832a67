/**
 * The JSON-RPC errors `/mcp` sends: a fixed text per code and a stable snake_case `data.code`, never the text of an
 * exception. The MCP SDK answers a handler's exception with its message, so a schema library's issue list or an
 * internal failure would otherwise reach the caller; the original is logged here instead. Tool calls never throw
 * (`calls.ts` answers a failure as a 500 tool result), so what remains are the SDK's own refusals.
 */
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isJSONRPCErrorResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The JSON-RPC 2.0 codes the endpoint answers with, their fixed text and their stable code; anything else is -32603. */
const ERRORS: Record<number, { message: string; code: string }> = {
  [-32700]: { message: 'Parse error', code: 'parse_error' },
  [-32600]: { message: 'Invalid Request', code: 'invalid_request' },
  [-32601]: { message: 'Method not found', code: 'method_not_found' },
  [-32602]: { message: 'Invalid params', code: 'invalid_params' },
  [-32603]: { message: 'Internal error', code: 'internal_error' },
};

/** `message` with an error member replaced by its fixed form (the original is logged when it said more). */
export function fixedRpcError(message: JSONRPCMessage): JSONRPCMessage {
  if (!isJSONRPCErrorResponse(message)) return message;
  const code = ERRORS[message.error.code] ? message.error.code : -32603;
  const fixed = ERRORS[code] as { message: string; code: string };
  if (message.error.message !== fixed.message || message.error.data !== undefined) {
    console.error(
      `[spotcheck] [mcp] JSON-RPC error ${message.error.code} answered as ${code}: ${message.error.message.slice(0, 500)}`,
    );
  }
  return { ...message, error: { code, message: fixed.message, data: { code: fixed.code } } };
}

/** Makes `transport` send every JSON-RPC error in its fixed form. */
export function sendFixedRpcErrors(transport: WebStandardStreamableHTTPServerTransport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(fixedRpcError(message), options);
}
