/**
 * An x402-paying MCP client end to end: the official MCP SDK client calls `check_endpoint` on the real service
 * (wired to the sandbox: SDK facilitator over HTTP, anvil with Circle's FiatToken), gets the x402 tool-result
 * binding once the free checks are used up, signs the `PaymentRequired` with the official x402 client and pays in
 * `params._meta["x402/payment"]`. Money is read on chain: the buyer pays exactly the price, once.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaidWorld, startPaidWorld } from '../helpers/world.ts';

// docs/api.md §8 literals, never read from core/limits.ts.
const PRICE = 20000n;
const FREE_CHECKS = 5;
const IP = '192.0.2.90';

let paid: PaidWorld;
let client: Client;
beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 2 });
  client = new Client({ name: 'paying-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', paid.spot.url), {
      requestInit: { headers: { 'x-forwarded-for': IP } },
    }),
  );
});
afterAll(async () => {
  await client?.close();
  await paid?.stop();
});

const check = async (meta?: Record<string, unknown>) =>
  (await client.callTool({
    name: 'check_endpoint',
    arguments: { url: paid.world.sellers.urls['sdk-ok'] },
    ...(meta ? { _meta: meta } : {}),
  })) as CallToolResult;

describe('a paid MCP tool call on the sandbox chain', () => {
  it('answers the binding after the free checks, then settles exactly the price once', async () => {
    for (let used = 1; used <= FREE_CHECKS; used += 1) {
      expect((await check()).structuredContent).toMatchObject({
        access: { tier: 'free', free_used_today: used },
      });
    }
    const unpaid = await check();
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    expect(required.accepts[0]).toMatchObject({
      amount: String(PRICE),
      payTo: paid.world.state.serviceWallet,
    });

    const payment = await paid.client(0).createPaymentPayload(required);
    const before = await paid.balances(0);
    const result = await check({ 'x402/payment': payment });
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as {
      verdict: string;
      payment: unknown;
      access: Record<string, string>;
    };
    expect(answer).toMatchObject({ verdict: 'pay', access: { tier: 'paid', charged_usd: '0.02' } });
    expect(answer.payment).not.toBeNull();
    const settlement = result._meta?.['x402/payment-response'] as { success: boolean; transaction: string };
    expect(settlement).toMatchObject({ success: true, transaction: answer.access.tx });

    const after = await paid.balances(0);
    expect(before.buyer - after.buyer).toBe(PRICE);
    expect(after.service - before.service).toBe(PRICE);
    expect(await paid.transfers(settlement.transaction as `0x${string}`)).toEqual([
      { from: paid.buyer(0).address, to: paid.world.state.serviceWallet, value: PRICE },
    ]);

    // The same payment again is refused through the binding and moves nothing.
    const replay = await check({ 'x402/payment': payment });
    expect(replay.isError).toBe(true);
    expect(replay.structuredContent).toMatchObject({ x402Version: 2, error: 'payment_already_used' });
    expect(await paid.balances(0)).toEqual(after);
  });

  it('never takes a payment sent with a dry run, and its receipt carries no paid detail', async () => {
    // The free checks are used up (the test above): a live check asks for payment, a dry run is still free.
    const unpaid = await check();
    expect(unpaid.isError).toBe(true);
    const payment = await paid
      .client(1)
      .createPaymentPayload(unpaid.structuredContent as unknown as PaymentRequired);
    const before = await paid.balances(1);
    const dry = (await client.callTool({
      name: 'check_endpoint',
      arguments: { url: paid.world.sellers.urls['sdk-ok'], mode: 'dry-run' },
      _meta: { 'x402/payment': payment },
    })) as CallToolResult;
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({
      verdict: 'pay',
      payment_terms_sha256: null,
      access: { tier: 'free', free_per_day: 50 },
    });
    expect(dry._meta?.['x402/payment-response']).toBeUndefined();
    expect(await paid.balances(1)).toEqual(before);

    const receiptId = (dry.structuredContent as { receipt_id: string }).receipt_id;
    const receipt = (await client.callTool({
      name: 'get_receipt',
      arguments: { id: receiptId },
    })) as CallToolResult;
    expect(receipt.structuredContent).toMatchObject({
      id: receiptId,
      mode: 'dry-run',
      access: { tier: 'free' },
    });
    for (const paidOnly of ['payment', 'quality', 'reputation', 'history_observations', 'expiry_check']) {
      expect(receipt.structuredContent, paidOnly).not.toHaveProperty(paidOnly);
    }
    // The payment was never taken: it still pays a live check, once.
    const live = await check({ 'x402/payment': payment });
    expect(live.structuredContent).toMatchObject({ access: { tier: 'paid', charged_usd: '0.02' } });
    expect(before.buyer - (await paid.balances(1)).buyer).toBe(PRICE);
  });
});
