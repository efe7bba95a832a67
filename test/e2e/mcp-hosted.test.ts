/**
 * Hosted keys over MCP, end to end: the official MCP SDK client sends an integrator key
 * (`Authorization: Bearer` or `x-service-key`) and `x-service-end-user` to the real service wired to the sandbox
 * world (anvil with Circle's FiatToken, the SDK facilitator over HTTP, the seller fleet). Tool answers carry the
 * hosted tier and block, count in the integrator's month exactly like the HTTP route, a suspended or revoked key is
 * an error result (never a free answer), and past the credit limit the tool result is the x402 MCP payment-required
 * binding, paid through `params._meta["x402/payment"]` and settled on chain. Spec literals are written out here.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hosted } from '../../api/hosted.ts';
import { createIntegrator } from '../helpers/integrators.ts';
import { fetchFrom, type PaidWorld, startPaidWorld } from '../helpers/world.ts';

const PRICE = 20000n;
const CHECK = '/v1/products/endpoint-spot-check';
let paid: PaidWorld;
let hosted: Hosted;
const clients: Client[] = [];

beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 2 });
  const value = paid.spot.service.deps.hosted;
  if (!value) throw new Error('hosted mode is not wired');
  hosted = value;
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await paid?.stop();
});

/** The official MCP client as an integrator's agent: its headers go on every MCP request. */
async function connect(ip: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'router-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', paid.spot.url), {
      requestInit: { headers: { 'x-forwarded-for': ip, ...headers } },
    }),
  );
  clients.push(client);
  return client;
}

const month = () => new Date().toISOString().slice(0, 7);
const sellerUrl = () => paid.world.sellers.urls['sdk-ok'] as string;
const checkTool = async (client: Client, meta?: Record<string, unknown>) =>
  (await client.callTool({
    name: 'check_endpoint',
    arguments: { url: sellerUrl() },
    ...(meta ? { _meta: meta } : {}),
  })) as CallToolResult;
const textOf = (result: CallToolResult) => JSON.parse((result.content[0] as { text: string }).text);

type Hosted402 = PaymentRequired & { error: string };

describe('hosted keys over MCP', () => {
  it('answer check_endpoint and payment_status with the hosted tier and block, counted like the HTTP route', async () => {
    const [key = ''] = await createIntegrator(hosted, 'mcprouter', '0');
    const bearer = await connect('198.18.20.1', {
      authorization: `Bearer ${key}`,
      'x-service-end-user': 'agent-42',
    });
    const headerKey = await connect('198.18.20.2', { 'x-service-key': key });

    const checked = await checkTool(bearer);
    expect(checked.isError).toBeFalsy();
    const block = {
      integrator_id: 'mcprouter',
      band: 'free_allowance',
      price_atomic: '0',
      month: month(),
      billed_on: 'invoice',
    };
    const answer = checked.structuredContent as { access: { hosted: { end_user_hash: string } } };
    expect(answer).toMatchObject({
      verdict: 'pay',
      access: { tier: 'hosted', hosted: block },
      access_tier: 'hosted',
    });
    expect(answer.access.hosted.end_user_hash).toMatch(/^eu:/);
    expect(answer.access.hosted.end_user_hash).not.toContain('agent-42');
    // The rate limit of the key is relayed from the route's headers.
    expect(checked._meta?.['spotcheck/ratelimit-policy']).toBe('"hosted";q=120;w=60');

    const status = (await headerKey.callTool({
      name: 'payment_status',
      arguments: {
        from: paid.buyer(0).address,
        nonce: `0x${'5a'.repeat(32)}`,
        valid_before: String(Math.floor(Date.now() / 1000) + 600),
      },
    })) as CallToolResult;
    expect(status.isError).toBeFalsy();
    expect(status.structuredContent).toMatchObject({
      type: 'payment-status',
      access: { tier: 'hosted', hosted: { ...block, end_user_hash: null } },
      access_tier: 'hosted',
    });

    // The HTTP route with the same key counts in the same month: 2 MCP calls, then 1 HTTP call.
    expect(await hosted.meter.calls('mcprouter', month())).toBe(2);
    const http = await fetchFrom('198.18.20.3')(
      `${paid.spot.url}${CHECK}?${new URLSearchParams({ url: sellerUrl() })}`,
      { headers: { authorization: `Bearer ${key}`, 'x-service-end-user': 'agent-42' } },
    );
    expect(http.status).toBe(200);
    expect(await hosted.meter.calls('mcprouter', month())).toBe(3);
    const me = await (
      await fetch(`${paid.spot.url}/v1/integrators/me`, { headers: { 'x-service-key': key } })
    ).json();
    expect(me.current_month).toMatchObject({
      calls: 3,
      bands: { free_allowance: 3, standard: 0, volume: 0 },
      end_users: 1,
    });
  });

  it('with a suspended or revoked key are an error result, never a free answer, and count nothing', async () => {
    const [key = ''] = await createIntegrator(hosted, 'mcpstates', '0');
    const keyId = key.split('_')[2] ?? '';
    const client = await connect('198.18.20.4', { authorization: `Bearer ${key}` });
    expect((await checkTool(client)).structuredContent).toMatchObject({ access: { tier: 'hosted' } });
    const at = new Date().toISOString();
    for (const state of ['suspended', 'revoked']) {
      await hosted.apply(JSON.stringify({ op: 'state', target: keyId, state, at }));
      const refused = await checkTool(client);
      expect(refused.isError, state).toBe(true);
      expect(refused.structuredContent, state).toBeUndefined();
      expect(refused._meta?.['spotcheck/http-status'], state).toBe(401);
      expect(textOf(refused).error, state).toMatchObject({
        code: 'bad_key',
        message: expect.stringContaining(state),
      });
    }
    expect(await hosted.meter.calls('mcpstates', month())).toBe(1);
  });

  it('past the credit limit answer the x402 MCP payment-required binding, and paying it settles on chain', async () => {
    const [key = ''] = await createIntegrator(hosted, 'mcpcapped', '20000');
    await hosted.meter.restore(month(), 'mcpcapped', 1000, []);
    const client = await connect('198.18.20.5', { 'x-service-key': key });
    expect((await checkTool(client)).structuredContent).toMatchObject({
      access: { tier: 'hosted', hosted: { band: 'standard', price_atomic: '20000' } },
    });

    const refused = await checkTool(client);
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['spotcheck/x-service-hosted']).toBe('credit_limit');
    const required = refused.structuredContent as unknown as Hosted402;
    expect(required.x402Version).toBe(2);
    expect(required.error).toContain('credit limit');
    expect(required.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: String(PRICE),
      payTo: paid.world.state.serviceWallet,
    });
    expect(textOf(refused)).toEqual(refused.structuredContent);

    const before = await paid.balances(1);
    const payment = await paid.client(1).createPaymentPayload(required);
    const result = await checkTool(client, { 'x402/payment': payment });
    expect(result.isError).toBeFalsy();
    const body = result.structuredContent as { access: { tier: string; tx: string }; payment: unknown };
    expect(body.access).toMatchObject({ tier: 'paid', charged_usd: '0.02' });
    expect(body.payment).not.toBeNull();
    const settlement = result._meta?.['x402/payment-response'] as { success: boolean; transaction: string };
    expect(settlement).toMatchObject({ success: true, transaction: body.access.tx });
    const after = await paid.balances(1);
    expect(before.buyer - after.buyer).toBe(PRICE);
    expect(after.service - before.service).toBe(PRICE);
    // A paid call is not on the invoice: the month still counts the 1,001 hosted calls.
    expect(await hosted.meter.calls('mcpcapped', month())).toBe(1001);
  });
});
