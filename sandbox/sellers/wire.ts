/**
 * Hand-built x402 wire objects for the sellers the SDK will not produce (docs/x402.md §2.1, §2.2). Everything
 * here is written out field by field on purpose: these sellers must not depend on the SDK's encoder.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type Address, ONE_CENT } from './constants.ts';

type Token = { asset: Address; name: string; version: string };

/** One v2 `accepts[]` entry; `validBefore` is the option's own expiry (unix seconds as a decimal string). */
export type V2Accept = {
  scheme: 'exact';
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
  validBefore?: string;
};

/** A v2 payment option in `token` on `network`. */
export function v2Accept(network: string, token: Token, payTo: string, amount: string = ONE_CENT): V2Accept {
  return {
    scheme: 'exact',
    network,
    amount,
    asset: token.asset,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: token.name, version: token.version },
  };
}

/** A v2 `PaymentRequired` object (what travels base64-encoded in `PAYMENT-REQUIRED`). */
export function v2Required(url: string, accepts: V2Accept[], description = 'Sandbox paid resource') {
  return {
    x402Version: 2,
    error: 'Payment required',
    resource: { url, description, mimeType: 'application/json' },
    accepts,
  };
}

/** A v1 `accepts[]` entry: v1 network name and `maxAmountRequired`, resource fields inline. */
export function v1Accept(
  url: string,
  network: string,
  token: Token,
  payTo: string,
  amount: string = ONE_CENT,
) {
  return {
    scheme: 'exact',
    network,
    maxAmountRequired: amount,
    resource: url,
    description: 'Sandbox paid resource (x402 v1)',
    mimeType: 'application/json',
    payTo,
    maxTimeoutSeconds: 60,
    asset: token.asset,
    extra: { name: token.name, version: token.version },
  };
}

/** A v1 402 body. */
export function v1Required(accepts: ReturnType<typeof v1Accept>[]) {
  return { x402Version: 1, error: 'X-PAYMENT header is required', accepts };
}

/** Standard base64 (RFC 4648 `+/=`) of UTF-8 JSON, as x402 headers carry it (docs/x402.md §0.3). */
export function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** The absolute URL the client asked for, as sellers put it in `resource.url`. */
export function requestUrl(req: IncomingMessage): string {
  return `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
}

/** Writes a whole response at once. */
export function send(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body = ''): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { ...headers, 'content-length': bytes.length });
  res.end(bytes);
}

/** A v2 402: the challenge in `PAYMENT-REQUIRED` and `{}` as the body, the way the SDK answers non-browsers. */
export function sendV2(res: ServerResponse, required: unknown, headers: OutgoingHttpHeaders = {}): void {
  send(
    res,
    402,
    {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'payment-required': base64Json(required),
      ...headers,
    },
    '{}',
  );
}

/** A v1 402: the challenge is the JSON body, no x402 header. */
export function sendV1(res: ServerResponse, required: unknown, headers: OutgoingHttpHeaders = {}): void {
  send(res, 402, { 'content-type': 'application/json', ...headers }, JSON.stringify(required));
}

/** A plain JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: OutgoingHttpHeaders = {},
) {
  send(res, status, { 'content-type': 'application/json', ...headers }, JSON.stringify(value));
}
