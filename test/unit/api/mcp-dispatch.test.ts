/**
 * The MCP side of a route's answer (`api/mcp/dispatch.ts`): the x402 tool-result binding of a 402, the settlement
 * in `_meta["x402/payment-response"]`, route errors as text with their status, relayed headers, and the internal
 * request a tool call makes (carried headers, the payment as `PAYMENT-SIGNATURE`, the caller's address).
 */
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { getRequestIP, H3 } from 'h3';
import { describe, expect, it } from 'vitest';
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
