/**
 * A paid check whose instance dies between its settlement and its answer (docs/architecture.md "Durability promises" 3; the buyer's expensive
 * mistake the product exists for: signing a second payment while the first has landed). The money moved once and no
 * answer left, so nothing was acknowledged and nothing need be kept; what matters is what the buyer can do next. The
 * same payment sent again to the restarted instance moves no money; Spotcheck's payment status says it landed and
 * not to sign again; the instance published nothing of the call. The real service in a child process, the sandbox
 * world (anvil with Circle's FiatToken, the SDK facilitator), and between them a forwarding facilitator that kills the
 * instance the moment the real facilitator's settle answer reaches it.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIntegratorStore } from '../../io/integrators/duckdb.ts';
import { seedIntegrator } from '../helpers/integrators.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { fetchFrom, type PaidWorld, requirementOf, startPaidWorld, worldEnv } from '../helpers/world.ts';

// docs/api.md §4 literal, never read from the code under test.
const PRICE = 20000n;
/** USD 10, the invoice of the second test. */
const INVOICE_TOTAL = 10_000_000n;
const CHECK = '/v1/products/endpoint-spot-check';
const STATUS = '/v1/products/payment-status';

describe('a paid check whose instance is killed between settlement and answer', () => {
  let paid: PaidWorld;
  let proxy: Server;
  let proxyUrl = '';
  let server: ServerProcess | null = null;
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-paid-kill-'));
  /** Set while the instance under test should die on the next settle answer: the settle answer it never got. */
  let killOnSettle = false;
  let settleAnswer: Record<string, unknown> | null = null;

  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  beforeAll(async () => {
    paid = await startPaidWorld({ buyers: 2 });
    const real = new URL(paid.world.state.facilitatorUrl);
    proxy = createServer((req, res) => {
      void (async () => {
        const sent = await body(req);
        const upstream = await fetch(`${real.origin}${req.url}`, {
          method: req.method ?? 'GET',
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
          ...(req.method === 'POST' ? { body: sent } : {}),
        });
        const text = await upstream.text();
        if (killOnSettle && req.url?.endsWith('/settle') && server) {
          killOnSettle = false;
          settleAnswer = JSON.parse(text) as Record<string, unknown>;
          server.child.kill('SIGKILL');
          await server.exited;
        }
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'text/plain',
        });
        res.end(text);
      })().catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as { port: number };
    proxyUrl = `http://127.0.0.1:${port}${real.pathname.replace(/\/$/, '')}`;
  }, 120_000);
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await new Promise((resolve) => proxy?.close(resolve));
    await paid?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const stop = async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    server = null;
  };
  const start = async (facilitatorUrl: string) => {
    server = await startServerProcess(dataDir, await freePort(), {
      ...worldEnv(paid.world.state),
      FACILITATOR_URL: facilitatorUrl,
      PROBE_ALLOW_CIDRS: '127.0.0.0/8',
    });
    return server.base;
  };

  it('moves the money once; the same payment again moves none, and payment status says not to sign again', async () => {
    let base = await start(proxyUrl);
    const checkUrl = () =>
      `${base}${CHECK}?${new URLSearchParams({ url: paid.world.sellers.urls['sdk-ok'] })}`;
    const unpaid = await fetch(checkUrl(), { headers: { 'PAYMENT-SIGNATURE': 'not-base64!' } });
    expect(unpaid.status).toBe(402);
    const header = await paid.sign(0, requirementOf(unpaid));
    const before = await paid.balances(0);

    killOnSettle = true;
    const lost = await fetch(checkUrl(), { headers: { 'PAYMENT-SIGNATURE': header } }).then(
      (response) => `answered ${response.status}`,
      (error: unknown) => error,
    );
    // No answer left: the connection ended with the process, after the settlement had landed.
    expect(lost).toBeInstanceOf(Error);
    expect(settleAnswer).toMatchObject({ success: true });
    const landed = await paid.balances(0);
    expect(landed.service - before.service).toBe(PRICE);
    expect(before.buyer - landed.buyer).toBe(PRICE);

    // The buyer retries the very same payment on the restarted instance (the official client would, on a dropped
    // connection): refused, and nothing moves.
    base = await start(paid.world.state.facilitatorUrl);
    const again = await fetch(checkUrl(), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(again.status).toBe(402);
    // The facilitator's verify reads the authorization's nonce as used on chain.
    expect(requirementOf(again).error).toBe('invalid_exact_evm_nonce_already_used');
    expect(await again.json()).not.toHaveProperty('receipt_id');
    expect(await paid.balances(0)).toEqual(landed);

    // Asked before signing a new one, payment status (a free call) says the first one landed.
    const status = await fetchFrom('198.51.100.21')(`${base}${STATUS}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payment_payload: header }),
    });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({
      status: 'landed',
      reason: 'settled_onchain',
      safe_to_resign: false,
      tx: { hash: settleAnswer?.transaction, status: 'success' },
    });

    // Nothing of the paid call was published: the only receipt is the payment status answer's.
    const list = (await (await fetch(`${base}/v1/receipts?page_size=500`)).json()) as {
      receipts: Array<{ type: string }>;
    };
    expect(list.receipts.map((item) => item.type)).toEqual(['payment-status']);
  }, 120_000);

  it('marks an invoice paid after its instance died between settlement and marking it, and never sells it again', async () => {
    await stop();
    const [key = ''] = await seedIntegrator(dataDir, 'lapsed', { keys: 1, creditLimitAtomic: '0' });
    const id = 'inv-202604-lapsed';
    const token = 'f'.repeat(32);
    // The month's invoice as the operator's run stores it (test/helpers seed it on the stopped server's store).
    const store = await openIntegratorStore(join(dataDir, 'integrators.duckdb'));
    await store.addInvoice({
      id,
      integrator: 'lapsed',
      month: '2026-04',
      totalAtomic: INVOICE_TOTAL.toString(),
      body: { id },
      status: 'open',
      tx: null,
      paidAt: null,
      payToken: token,
    });
    await store.close();

    let base = await start(proxyUrl);
    const payUrl = () => `${base}/v1/invoices/${id}/pay?token=${token}`;
    const header = await paid.sign(1, requirementOf(await fetch(payUrl())), { maxUsd: '10' });
    const before = await paid.balances(1);
    killOnSettle = true;
    const lost = await fetch(payUrl(), { headers: { 'PAYMENT-SIGNATURE': header } }).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(Error);
    expect(settleAnswer).toMatchObject({ success: true });
    const landed = await paid.balances(1);
    expect(landed.service - before.service).toBe(INVOICE_TOTAL);

    // Restarted: the claim the dead instance left names the authorization, and the chain says it paid the invoice.
    base = await start(paid.world.state.facilitatorUrl);
    const read = await fetch(`${base}/v1/invoices/${id}`, { headers: { 'x-service-key': key } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { payment: unknown }).payment).toMatchObject({
      status: 'paid',
      tx: settleAnswer?.transaction,
    });
    // The pay link now answers that it is paid, before any payment is asked for or taken.
    const again = await fetch(payUrl(), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('invoice_paid');
    expect(await paid.balances(1)).toEqual(landed);
  }, 120_000);
});
