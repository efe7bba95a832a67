/**
 * A second, independently switchable JSON-RPC source in front of the same anvil. The payment-status check wants
 * two chain sources that agree (docs/api.md §3.2); this proxy lets tests make one of them fail, fall behind or lie.
 *
 * Modes:
 * - `ok`: passes every call through unchanged.
 * - `down`: answers every request with HTTP 503 (no JSON-RPC body), as an unreachable provider would.
 * - `lag`: behaves like a node `lagBlocks` behind: `eth_blockNumber` and every `latest`/`pending`/`safe`/
 *   `finalized` tag resolve to head − lagBlocks, newer blocks read as absent (`null` block, `header not found`),
 *   `eth_getLogs` is clamped to the lagged head, and receipts or transactions mined later read as `null`.
 * - `lie`: every `eth_call` of `authorizationState(address,bytes32)` (selector 0xe94a0102) answers `false`;
 *   everything else, including logs, passes through, so the lie is only visible by comparing sources.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as v from 'valibot';

/** See the module comment for what each mode does. */
export type RpcProxyMode = 'ok' | 'down' | 'lag' | 'lie';

/** A running proxy. `requests` counts JSON-RPC calls received (a batch counts each call). */
export type RpcProxy = {
  url: string;
  readonly requests: number;
  setMode(mode: RpcProxyMode, options?: { lagBlocks?: number }): void;
  stop(): Promise<void>;
};

const AUTHORIZATION_STATE_SELECTOR = '0xe94a0102';
const FALSE_WORD = `0x${'0'.repeat(64)}`;
const MOVING_TAGS = new Set(['latest', 'pending', 'safe', 'finalized']);
/** Position of the block tag in the params of each method that takes one. */
const TAG_POSITION: Record<string, number> = {
  eth_call: 1,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_getStorageAt: 2,
  eth_getBlockByNumber: 0,
};
const MINED_LOOKUPS = new Set([
  'eth_getTransactionReceipt',
  'eth_getTransactionByHash',
  'eth_getBlockByHash',
]);

const callSchema = v.object({
  jsonrpc: v.optional(v.string()),
  id: v.optional(v.union([v.string(), v.number(), v.null()])),
  method: v.string(),
  params: v.optional(v.array(v.unknown())),
});
type Call = v.InferOutput<typeof callSchema>;
type Reply = {
  jsonrpc: '2.0';
  id: Call['id'] | null;
  result?: unknown;
  error?: { code: number; message: string } | undefined;
};

/** Starts a proxy to `upstream` (an anvil RPC URL) on loopback. */
export async function startRpcProxy(
  upstream: string,
  options: { port?: number; host?: string } = {},
): Promise<RpcProxy> {
  const state = { mode: 'ok' as RpcProxyMode, lagBlocks: 5, requests: 0 };
  let nextId = 1;

  async function forward(method: string, params: unknown[]): Promise<Reply> {
    const response = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    const reply = v.safeParse(replySchema, await response.json());
    if (!reply.success)
      return { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'bad upstream reply' } };
    return { jsonrpc: '2.0', id: null, ...reply.output };
  }

  async function answer(call: Call): Promise<Reply> {
    const params = call.params ?? [];
    const id = call.id ?? null;
    if (state.mode === 'lie' && call.method === 'eth_call' && callsAuthorizationState(params[0])) {
      return { jsonrpc: '2.0', id, result: FALSE_WORD };
    }
    if (state.mode !== 'lag') return { ...(await forward(call.method, params)), id };

    const head = hexToNumber((await forward('eth_blockNumber', [])).result);
    const lagged = Math.max(0, head - state.lagBlocks);
    const laggedHex = `0x${lagged.toString(16)}`;
    if (call.method === 'eth_blockNumber') return { jsonrpc: '2.0', id, result: laggedHex };
    const position = TAG_POSITION[call.method];
    if (position !== undefined) {
      const rewritten = [...params];
      const tag = rewritten[position] ?? 'latest';
      if (typeof tag === 'string' && MOVING_TAGS.has(tag)) rewritten[position] = laggedHex;
      else if (hexToNumber(tag) > lagged) {
        return call.method === 'eth_getBlockByNumber'
          ? { jsonrpc: '2.0', id, result: null }
          : { jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } };
      }
      return { ...(await forward(call.method, rewritten)), id };
    }
    if (call.method === 'eth_getLogs') return { ...(await laggedLogs(params, lagged)), id };
    const reply = await forward(call.method, params);
    if (MINED_LOOKUPS.has(call.method) && minedAfter(reply.result, lagged))
      return { jsonrpc: '2.0', id, result: null };
    return { ...reply, id };
  }

  async function laggedLogs(params: unknown[], lagged: number): Promise<Reply> {
    const filter = v.safeParse(logFilterSchema, params[0]);
    if (!filter.success) return forward('eth_getLogs', params);
    if (filter.output.blockHash !== undefined) {
      const reply = await forward('eth_getLogs', params);
      const logs = Array.isArray(reply.result)
        ? reply.result.filter((log) => !minedAfter(log, lagged))
        : reply.result;
      return { ...reply, result: logs };
    }
    const clamp = (tag: unknown) =>
      tag === undefined || (typeof tag === 'string' && MOVING_TAGS.has(tag)) ? lagged : hexToNumber(tag);
    const from = clamp(filter.output.fromBlock ?? 'latest');
    const to = Math.min(clamp(filter.output.toBlock), lagged);
    if (from > to) return { jsonrpc: '2.0', id: null, result: [] };
    const hex = (n: number) => `0x${n.toString(16)}`;
    return forward('eth_getLogs', [{ ...filter.output, fromBlock: hex(from), toBlock: hex(to) }]);
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      reply(res, 502, { jsonrpc: '2.0', id: null, error: { code: -32603, message: messageOf(error) } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    if (state.mode === 'down') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      return void res.end('rpc source down');
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    }
    const calls = Array.isArray(body) ? body : [body];
    const replies = await Promise.all(
      calls.map(async (raw): Promise<Reply> => {
        state.requests += 1;
        const call = v.safeParse(callSchema, raw);
        if (!call.success)
          return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } };
        return answer(call.output);
      }),
    );
    reply(res, 200, Array.isArray(body) ? replies : replies[0]);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    get requests() {
      return state.requests;
    },
    setMode(mode, modeOptions = {}) {
      state.mode = mode;
      state.lagBlocks = modeOptions.lagBlocks ?? 5;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const replySchema = v.object({
  result: v.optional(v.unknown()),
  error: v.optional(v.object({ code: v.number(), message: v.string() })),
});
const logFilterSchema = v.looseObject({
  fromBlock: v.optional(v.string()),
  toBlock: v.optional(v.string()),
  blockHash: v.optional(v.string()),
});
const minedSchema = v.looseObject({ blockNumber: v.string() });
const callObjectSchema = v.looseObject({ data: v.optional(v.string()), input: v.optional(v.string()) });

function callsAuthorizationState(tx: unknown): boolean {
  const parsed = v.safeParse(callObjectSchema, tx);
  const data = parsed.success ? (parsed.output.data ?? parsed.output.input ?? '') : '';
  return data.toLowerCase().startsWith(AUTHORIZATION_STATE_SELECTOR);
}

function minedAfter(result: unknown, lagged: number): boolean {
  const parsed = v.safeParse(minedSchema, result);
  return parsed.success && hexToNumber(parsed.output.blockNumber) > lagged;
}

function hexToNumber(value: unknown): number {
  return typeof value === 'string' && /^0x[0-9a-fA-F]+$/u.test(value)
    ? Number.parseInt(value.slice(2), 16)
    : 0;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
