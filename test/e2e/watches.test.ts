/**
 * Watches end to end (docs/api.md "Watches"), as a router would use them: the real server in a child process over the
 * sandbox world (anvil with Circle's FiatToken, the SDK facilitator over HTTP), a watch bought with the official
 * x402 client (`@x402/fetch`), a watched seller and a webhook receiver on loopback. A wallet change arrives as a
 * signed `terms_changed` within the interval plus a few seconds, verified with `@noble/ed25519` and the JWKS alone;
 * a receiver answering 500 gets the same event (same `webhook-id`) once it recovers; an event in the outbox when the
 * service is SIGKILLed arrives after the restart; a webhook URL on a private address is refused before any payment.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../../sandbox/world.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  type Received,
  type Receiver,
  startReceiver,
  startSwitchableSeller,
  verifyDelivery,
} from '../helpers/webhooks.ts';
import { fetchFrom, worldEnv } from '../helpers/world.ts';

// docs/api.md "Watches" literals, never read from the code under test.
const PRICE = 1_000_000n;
const INTERVAL_S = 2;
const W1 = '0x7a11000000000000000000000000000000000001';
const W2 = '0x7a11000000000000000000000000000000000002';
const W3 = '0x7a11000000000000000000000000000000000003';

type Watch = { id: string; token: string; status: string; expires_at: string };
type Jwks = { keys: Array<{ kid: string; x: string }> };

describe('a watch bought with the official x402 client', () => {
  let world: World;
  let server: ServerProcess | null = null;
  let seller: Awaited<ReturnType<typeof startSwitchableSeller>>;
  let receiver: Receiver;
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-watches-'));
  let port = 0;

  beforeAll(async () => {
    world = await startWorld({ buyers: 1 });
    seller = await startSwitchableSeller(W1);
    receiver = await startReceiver(200);
    port = await freePort();
  }, 120_000);
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await seller?.close();
    await receiver?.close();
    await world?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async () => {
    server = await startServerProcess(dataDir, port, {
      ...worldEnv(world.state),
      PROBE_ALLOW_CIDRS: '127.0.0.0/8',
      WATCH_INTERVAL_S: String(INTERVAL_S),
    });
    return server.base;
  };
  const buyer = () => privateKeyToAccount(world.state.buyerKeys[0] as `0x${string}`);
  const balance = () => world.chain.balanceOf(buyer().address);
  const paying = () => {
    // The client's default cap (USD 1 a payment) admits a watch: README "Watches" says no spend control is needed.
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(buyer()));
    return wrapFetchWithPayment(fetchFrom('198.18.32.1'), client);
  };
  const jwks = async (base: string) => (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as Jwks;
  /** The first delivery of an event not seen before `seen` deliveries, with the status the receiver answered. */
  const nextEvent = (seen: number, what: string, timeoutMs: number) =>
    waitFor(() => receiver.received.slice(seen).find((r) => r.headers['webhook-id']), { what, timeoutMs });

  it('refuses a webhook URL on a private address before any payment', async () => {
    const base = await start();
    const before = await balance();
    const refused = await paying()(`${base}/v1/watches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: seller.url, webhook_url: 'http://10.0.0.1/hook' }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('webhook_url_refused');
    expect(await balance()).toBe(before);
  }, 120_000);

  it('delivers signed changes, redelivers with the same id after 500s, and loses none to a SIGKILL', async () => {
    let base = server?.base ?? (await start());
    const before = await balance();
    const bought = await paying()(`${base}/v1/watches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: seller.url, webhook_url: receiver.url }),
    });
    expect(bought.status).toBe(201);
    expect(bought.headers.get('payment-response')).toBeTruthy();
    const watch = (await bought.json()) as Watch;
    expect(watch).toMatchObject({ status: 'active' });
    expect(before - (await balance())).toBe(PRICE);

    // The baseline: the watch's first probe writes a receipt of the endpoint and sends nothing.
    await waitFor(
      async () => (await fetch(`${base}/v1/receipts/by-url?url=${encodeURIComponent(seller.url)}`)).ok,
      { what: 'the baseline receipt', timeoutMs: 30_000 },
    );
    expect(receiver.received).toEqual([]);

    // 1. The seller changes its wallet: a signed terms_changed arrives within the interval plus a few seconds.
    seller.wallet.payTo = W2;
    const changedAt = Date.now();
    const first = await nextEvent(0, 'terms_changed at the receiver', (INTERVAL_S + 10) * 1000);
    expect(Date.now() - changedAt).toBeLessThan((INTERVAL_S + 10) * 1000);
    const event = await verifyDelivery(first, await jwks(base));
    expect(event).toMatchObject({ type: 'watch-event', event: 'terms_changed', watch_id: watch.id });
    expect(String((event.before as { pay_to: string }).pay_to).toLowerCase()).toBe(W1);
    expect(String((event.after as { pay_to: string }).pay_to).toLowerCase()).toBe(W2);
    expect(event.receipt_id).toMatch(/^sc-/);

    // 2. A receiver answering 500 gets the same event, same id and body, once it recovers.
    receiver.answer.status = 500;
    let seen = receiver.received.length;
    seller.wallet.payTo = W3;
    const failed = await nextEvent(seen, 'the attempt answered 500', (INTERVAL_S + 10) * 1000);
    expect(failed.answered).toBe(500);
    receiver.answer.status = 200;
    const recovered = await waitFor(
      () =>
        receiver.received.find(
          (r) => r.answered === 200 && r.headers['webhook-id'] === failed.headers['webhook-id'],
        ),
      { what: 'the redelivery once the receiver answers 200', timeoutMs: 40_000 },
    );
    expect(recovered.body).toBe(failed.body);
    expect((await verifyDelivery(recovered, await jwks(base))).event).toBe('terms_changed');

    // 3. An event in the outbox when the service is SIGKILLed arrives after the restart, with its id.
    receiver.answer.status = 500;
    seen = receiver.received.length;
    seller.wallet.payTo = W1;
    const pending = await nextEvent(seen, 'the attempt before the kill', (INTERVAL_S + 10) * 1000);
    server?.child.kill('SIGKILL');
    await server?.exited;
    receiver.answer.status = 200;
    base = await start();
    const after = await waitFor(
      () =>
        receiver.received.find(
          (r: Received) => r.answered === 200 && r.headers['webhook-id'] === pending.headers['webhook-id'],
        ),
      { what: 'the event of the killed service, delivered after the restart', timeoutMs: 60_000 },
    );
    const survived = await verifyDelivery(after, await jwks(base));
    expect(survived).toMatchObject({ event: 'terms_changed', watch_id: watch.id });
    expect(String((survived.after as { pay_to: string }).pay_to).toLowerCase()).toBe(W1);

    // Every event is on the poll route too, newest first; duplicates at the receiver only ever share an id.
    const page = (await (
      await fetch(`${base}/v1/watches/${watch.id}/events`, { headers: { 'x-watch-token': watch.token } })
    ).json()) as { events: Array<{ id: string; event: string }> };
    expect(page.events.map((e) => e.event)).toEqual(['terms_changed', 'terms_changed', 'terms_changed']);
    const ids = new Set(page.events.map((e) => e.id));
    for (const delivery of receiver.received)
      expect(ids.has(delivery.headers['webhook-id'] ?? '')).toBe(true);
    const bodies = new Map<string, string>();
    for (const delivery of receiver.received) {
      const id = delivery.headers['webhook-id'] ?? '';
      expect(bodies.get(id) ?? delivery.body).toBe(delivery.body);
      bodies.set(id, delivery.body);
    }
  }, 240_000);
});
