/**
 * The MCP side of a route's answer (`api/mcp/dispatch.ts`): the x402 tool-result binding of a 402, the settlement
 * in `_meta["x402/payment-response"]`, route errors as text with their status, relayed headers, and the internal
 * request a tool call makes (carried headers, the payment as `PAYMENT-SIGNATURE`, the caller's address).
 */
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { getRequestIP, H3 } from 'h3';
import { describe, expect, it, vi } from 'vitest';
import { callTool } from '../../../api/mcp/calls.ts';
import { callRoute, toolResultOf } from '../../../api/mcp/dispatch.ts';

const REQUIRED: PaymentRequired = {
  x402Version: 2,
  error: 'Payment required',
  resource: { url: 'https://spotcheck.test/v1/products/endpoint-spot-check' },
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '20000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: `0x${'11'.repeat(20)}`,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    },
  ],
};

describe('toolResultOf', () => {
  it('binds a 402 as isError with the PaymentRequired in structuredContent and content[0].text', async () => {
    const response = Response.json(
      { other: 'body' },
      {
        status: 402,
        headers: {
          'payment-required': encodePaymentRequiredHeader(REQUIRED),
          'x-service-hosted': 'credit_limit',
        },
      },
    );
    const result = await toolResultOf(response);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual(REQUIRED);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(REQUIRED);
    expect(result._meta?.['spotcheck/x-service-hosted']).toBe('credit_limit');
  });

  it('returns a paid answer with its settlement in _meta["x402/payment-response"]', async () => {
    const settlement = {
      success: true,
      transaction: `0x${'ab'.repeat(32)}`,
      network: 'eip155:8453' as const,
    };
    const response = Response.json(
      { verdict: 'pay' },
      { headers: { 'payment-response': encodePaymentResponseHeader(settlement) } },
    );
    const result = await toolResultOf(response);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ verdict: 'pay' });
    expect(result._meta?.['x402/payment-response']).toEqual(settlement);
  });

  it('gives a route error as text only, with its status and Retry-After', async () => {
    const body = { error: { code: 'chain_unavailable', message: 'No chain source answered.' } };
    const result = await toolResultOf(Response.json(body, { status: 503, headers: { 'retry-after': '5' } }));
    expect(result).toEqual({
      isError: true,
      content: [{ type: 'text', text: JSON.stringify(body) }],
      _meta: { 'spotcheck/http-status': 503, 'spotcheck/retry-after': '5' },
    });
  });
});

describe('callRoute', () => {
  it('carries keys, the end-user tag and the payment, drops other headers, and gives the caller address', async () => {
    const app = new H3();
    app.post('/echo', async (event) => ({
      ip: getRequestIP(event) ?? null,
      forwarded: event.req.headers.get('x-forwarded-for'),
      key: event.req.headers.get('x-service-key'),
      bearer: event.req.headers.get('authorization'),
      endUser: event.req.headers.get('x-service-end-user'),
      cookie: event.req.headers.get('cookie'),
      payment: event.req.headers.get('payment-signature'),
      body: await event.req.json(),
    }));
    const headers = new Headers({
      'x-service-key': 'k',
      authorization: 'Bearer b',
      'x-service-end-user': 'agent-7',
      cookie: 'session=1',
      'x-forwarded-for': '10.9.9.9',
    });
    const payment = { x402Version: 2, payload: { signature: '0x01' } };
    const response = await callRoute(
      (request) => app.fetch(request),
      'https://spotcheck.test',
      { address: '198.51.100.77', headers },
      { method: 'POST', path: '/echo', body: { url: 'https://seller.example/x' }, hosted: true },
      payment,
    );
    const echoed = (await response.json()) as Record<string, unknown>;
    expect(echoed).toEqual({
      ip: '198.51.100.77',
      forwarded: null,
      key: 'k',
      bearer: 'Bearer b',
      endUser: 'agent-7',
      cookie: null,
      payment: Buffer.from(JSON.stringify(payment)).toString('base64'),
      body: { url: 'https://seller.example/x' },
    });
  });

  it('carries integrator keys and the end-user tag only to routes that take them; other keys to every route', async () => {
    const app = new H3();
    app.get('/echo', (event) => ({
      key: event.req.headers.get('x-service-key'),
      bearer: event.req.headers.get('authorization'),
      endUser: event.req.headers.get('x-service-end-user'),
    }));
    const echo = async (headers: Record<string, string>) =>
      (await callRoute(
        (request) => app.fetch(request),
        'https://spotcheck.test',
        { address: '198.51.100.78', headers: new Headers(headers) },
        { method: 'GET', path: '/echo' },
        undefined,
      ).then((response) => response.json())) as Record<string, unknown>;
    expect(await echo({ authorization: 'Bearer sck_live_abc_def', 'x-service-end-user': 'agent-7' })).toEqual(
      { key: null, bearer: null, endUser: null },
    );
    expect(await echo({ 'x-service-key': 'sck_live_abc_def' })).toEqual({
      key: null,
      bearer: null,
      endUser: null,
    });
    expect(await echo({ authorization: 'Bearer exempt-secret' })).toEqual({
      key: null,
      bearer: 'Bearer exempt-secret',
      endUser: null,
    });
  });
});

describe('internal errors', () => {
  const SECRET = 'connect ECONNREFUSED 10.0.0.5:5432 password=hunter2 at /srv/spotcheck/io/store/port.ts:42';
  const generic = {
    error: { code: 'internal_error', message: 'Something went wrong on our side; nothing was charged.' },
  };

  it('a tool whose call throws answers a generic error with a stable code, and logs the exception', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const context = {
        fetch: () => Promise.reject(new Error(SECRET)),
        origin: 'https://spotcheck.test',
        caller: { address: '198.51.100.79', headers: new Headers() },
      };
      for (const [name, args] of [
        ['check_endpoint', { url: 'https://seller.example/x' }],
        ['lookup', {}],
        ['get_receipt', { id: 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa' }],
      ] as const) {
        const result = await callTool(context, name, args, undefined);
        expect(result.isError, name).toBe(true);
        expect(JSON.parse((result.content[0] as { text: string }).text), name).toEqual(generic);
        expect(result._meta?.['spotcheck/http-status'], name).toBe(500);
        expect(JSON.stringify(result), name).not.toMatch(/hunter2|ECONNREFUSED|store\.ts/);
      }
      expect(String(log.mock.calls.flat().join(' '))).toMatch(/ECONNREFUSED/);
    } finally {
      log.mockRestore();
    }
  });

  it('a route answer that is not JSON is reported without its text', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const result = await toolResultOf(new Response(`TypeError: ${SECRET}`, { status: 500 }));
      expect(result.isError).toBe(true);
      expect(result._meta?.['spotcheck/http-status']).toBe(500);
      const text = (result.content[0] as { text: string }).text;
      expect(JSON.parse(text).error.code).toBe('bad_answer');
      expect(text).not.toMatch(/hunter2|ECONNREFUSED|TypeError/);
    } finally {
      log.mockRestore();
    }
  });
});
