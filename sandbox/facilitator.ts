/**
 * The sandbox facilitator: the x402 SDK's own `x402Facilitator` with the exact EVM scheme, settling on the local
 * chain from the relayer account, served over loopback HTTP with the paths and bodies `HTTPFacilitatorClient`
 * uses (docs/x402.md §4.1, §4.4). Tests can make it fail on purpose with {@link Facilitator.setMode}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorClient, HTTPFacilitatorClient } from '@x402/core/http';
import { parsePaymentPayload, parsePaymentRequirements } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/facilitator';
import * as v from 'valibot';
import { type Abi, createWalletClient, http, publicActions } from 'viem';
import { type Chain, localBase } from './chain.ts';

/** `ok` serves normally; `down` answers every request 503; `slow` answers after `delayMs`; `lie` verifies normally
 *  but answers every settle with a success that settled nothing (`"hello"` on `eip155:1` for one atomic unit). */
export type FacilitatorMode = 'ok' | 'down' | 'slow' | 'lie';

/** A running sandbox facilitator. */
export type Facilitator = {
  url: string;
  /** An `HTTPFacilitatorClient` pointed at {@link Facilitator.url}. */
  client: FacilitatorClient;
  /** The relayer address that submits settlements and pays their gas. */
  signer: `0x${string}`;
  /** Requests answered (or refused) per endpoint since start, so tests can assert "never settled". */
  calls: { verify: number; settle: number; supported: number };
  setMode(mode: FacilitatorMode, options?: { delayMs?: number }): void;
  stop(): Promise<void>;
};

/** Options of {@link startFacilitator}; `clientTimeoutMs` is the timeout of the returned `client`. */
export type FacilitatorOptions = { port?: number; host?: string; clientTimeoutMs?: number };

const BODY_LIMIT = 1_000_000;
const DEFAULT_SLOW_MS = 3_000;

/** Starts the facilitator for `eip155:8453` (x402 v2) and `base` (x402 v1) on loopback. */
export async function startFacilitator(chain: Chain, options: FacilitatorOptions = {}): Promise<Facilitator> {
  const facilitator = createSdkFacilitator(chain);
  const state = { mode: 'ok' as FacilitatorMode, delayMs: DEFAULT_SLOW_MS };
  const calls = { verify: 0, settle: 0, supported: 0 };
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      send(res, 500, { error: { code: 'facilitator_error', message: messageOf(error) } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://facilitator.local').pathname.replace(/\/+$/u, '');
    const endpoint = path === '/verify' || path === '/settle' || path === '/supported' ? path.slice(1) : null;
    if (endpoint === null) return send(res, 404, { error: { code: 'not_found', message: 'unknown path' } });
    calls[endpoint as keyof typeof calls] += 1;
    if (state.mode === 'down') {
      return send(res, 503, { error: { code: 'facilitator_down', message: 'facilitator switched off' } });
    }
    if (state.mode === 'slow') await delay(state.delayMs, timers);

    if (endpoint === 'supported') {
      if (req.method !== 'GET')
        return send(res, 405, { error: { code: 'method_not_allowed', message: 'GET' } });
      return send(res, 200, facilitator.getSupported());
    }
    if (req.method !== 'POST')
      return send(res, 405, { error: { code: 'method_not_allowed', message: 'POST' } });
    const body = await readJson(req);
    if (!body.ok) return send(res, 400, { error: { code: 'bad_json', message: body.message } });
    const request = parseRequest(body.value);
    if (!request.ok) {
      const failure =
        endpoint === 'verify'
          ? { isValid: false, invalidReason: 'invalid_payload', invalidMessage: request.message }
          : {
              success: false,
              errorReason: 'invalid_payload',
              errorMessage: request.message,
              transaction: '',
              network: '',
            };
      return send(res, 400, failure);
    }
    const { paymentPayload, paymentRequirements } = request;
    if (endpoint === 'settle' && state.mode === 'lie') {
      return send(res, 200, { success: true, transaction: 'hello', network: 'eip155:1', amount: '1' });
    }
    const result =
      endpoint === 'verify'
        ? await facilitator.verify(paymentPayload, paymentRequirements)
        : await facilitator.settle(paymentPayload, paymentRequirements);
    return send(res, 200, result);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const client = new HTTPFacilitatorClient(
    options.clientTimeoutMs === undefined ? { url } : { url, timeoutMs: options.clientTimeoutMs },
  );

  return {
    url,
    client,
    signer: chain.accounts.relayer.address,
    calls,
    setMode(mode, modeOptions = {}) {
      state.mode = mode;
      state.delayMs = modeOptions.delayMs ?? DEFAULT_SLOW_MS;
    },
    stop: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The SDK facilitator over a viem wallet client of the relayer, with the explicit signer methods of Gotcha 11. */
function createSdkFacilitator(chain: Chain): x402Facilitator {
  const wallet = createWalletClient({
    account: chain.accounts.relayer,
    chain: localBase(chain.rpcUrl),
    transport: http(chain.rpcUrl, { retryCount: 0 }),
    pollingInterval: 25,
  }).extend(publicActions);
  // The SDK declares ABIs as `readonly unknown[]`; they are the SDK's own constants, passed through to viem.
  const signer = toFacilitatorEvmSigner(
    {
      address: chain.accounts.relayer.address,
      readContract: (args) =>
        wallet.readContract({
          address: args.address,
          abi: args.abi as Abi,
          functionName: args.functionName,
          args: args.args ?? [],
        }),
      verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0]),
      writeContract: (args) =>
        wallet.writeContract({
          address: args.address,
          abi: args.abi as Abi,
          functionName: args.functionName,
          args: args.args,
          ...(args.gas === undefined ? {} : { gas: args.gas }),
          ...(args.dataSuffix === undefined ? {} : { dataSuffix: args.dataSuffix }),
        }),
      sendTransaction: (args) => wallet.sendTransaction({ to: args.to, data: args.data }),
      waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
      getCode: (args) => wallet.getCode(args),
    },
    { confirmationTimeoutMs: 30_000 },
  );
  // v1 networks are plain names (`base`); the SDK's `Network` type only spells CAIP-2, and its own
  // `registerExactEvmScheme` passes v1 names the same way. Only `base` is registered: the relayer can settle
  // nowhere else, and `/supported` should not claim other chains.
  const v1Base = 'base' as `${string}:${string}`;
  return new x402Facilitator()
    .register('eip155:8453', new ExactEvmScheme(signer))
    .registerV1(v1Base, new ExactEvmSchemeV1(signer));
}

type Parsed =
  | { ok: true; paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements }
  | { ok: false; message: string };

const envelope = v.object({
  x402Version: v.number(),
  paymentPayload: v.unknown(),
  paymentRequirements: v.unknown(),
});

function parseRequest(body: unknown): Parsed {
  const outer = v.safeParse(envelope, body);
  if (!outer.success) return { ok: false, message: v.summarize(outer.issues) };
  const payload = parsePaymentPayload(outer.output.paymentPayload);
  if (!payload.success) return { ok: false, message: `paymentPayload: ${payload.error.message}` };
  const requirements = parsePaymentRequirements(outer.output.paymentRequirements);
  if (!requirements.success)
    return { ok: false, message: `paymentRequirements: ${requirements.error.message}` };
  // The SDK types its single verify/settle entry point with the v2 shapes and dispatches v1 bodies at run time
  // on `x402Version`; both were validated by the SDK's own schemas just above.
  return {
    ok: true,
    paymentPayload: payload.data as PaymentPayload,
    paymentRequirements: requirements.data as PaymentRequirements,
  };
}

async function readJson(
  req: IncomingMessage,
): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > BODY_LIMIT) return { ok: false, message: 'body larger than 1 MB' };
    chunks.push(buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (error) {
    return { ok: false, message: messageOf(error) };
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  const text = JSON.stringify(body, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function delay(ms: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
