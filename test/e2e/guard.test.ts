/**
 * The guard (`packages/x402-guard`) end to end: the official client (`@x402/fetch` over `x402Client` with the EVM
 * `exact` scheme) pays sellers on the sandbox chain (anvil with Circle's FiatToken at the Base USDC address, the SDK
 * facilitator) with the guard attached, asking the real service on a port. Every test pays from a buyer of its own
 * and reads the wallets on chain, so each USDC transfer is counted. Tests run in file order: the last moves chain time.
 */
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachGuard, type GuardEvent, type GuardOptions } from '../../packages/x402-guard/src/index.ts';
import { GUARD_WALLETS, type GuardSellers, startGuardSellers } from '../../sandbox/sellers/guard-sellers.ts';
import { createIntegrator } from '../helpers/integrators.ts';
import { startTestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';
import { fetchFrom, type PaidWorld, startPaidWorld, worldEnv } from '../helpers/world.ts';

const CHECK = '/v1/products/endpoint-spot-check';
const PRICE = 10_000n;

let paid: PaidWorld;
let sellers: GuardSellers;

beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 9 });
  sellers = await startGuardSellers({ facilitator: paid.world.facilitator.client });
});
afterAll(async () => {
  await sellers?.close();
  await paid?.stop();
});

/** A guarded official client for buyer `index`, asking Spotcheck as the caller at `ip`. */
function guarded(index: number, ip: string, options: Partial<GuardOptions> = {}) {
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(paid.buyer(index)));
  const events: GuardEvent[] = [];
  let signed = 0;
  client.onAfterPaymentCreation(async () => {
    signed += 1;
  });
  const guard = attachGuard(client, {
    service: paid.spot.url,
    fetch: fetchFrom(ip),
    onEvent: (event) => events.push(event),
    ...options,
  });
  const pay = guard.track(wrapFetchWithPayment(fetch, client));
  return { client, guard, events, pay, signed: () => signed };
}

const balance = (address: string) => paid.world.chain.balanceOf(address as `0x${string}`);
const buyerBalance = (index: number) => balance(paid.buyer(index).address);

describe('the guard on the official client', () => {
  it('pays an honest seller once: the buyer and the seller move by exactly the price', async () => {
    const { pay, events, signed } = guarded(0, '198.51.100.1');
    const before = { buyer: await buyerBalance(0), seller: await balance(GUARD_WALLETS.honest) };
    const response = await pay(sellers.urls.honest);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ city: 'Paris', guarded: true });
    expect(signed()).toBe(1);
    expect(await buyerBalance(0)).toBe(before.buyer - PRICE);
    expect(await balance(GUARD_WALLETS.honest)).toBe(before.seller + PRICE);
    expect(events).toMatchObject([
      { type: 'approved', url: sellers.urls.honest, method: 'GET', reused: false },
    ]);
  });

  it('refuses a seller that shows the probe the listed wallet and the client another; no money moves', async () => {
    const { pay, events, signed } = guarded(1, '198.51.100.2');
    const before = await buyerBalance(1);
    await expect(pay(sellers.urls['bait-wallet'])).rejects.toThrow(/skip\/challenge_mismatch/);
    expect(signed()).toBe(0);
    expect(await buyerBalance(1)).toBe(before);
    expect(await balance(GUARD_WALLETS.bait)).toBe(0n);
    expect(await balance(GUARD_WALLETS.listed)).toBe(0n);
    expect(events).toMatchObject([{ type: 'refused', reason: 'challenge_mismatch', verdict: 'skip' }]);
  });

  it('the plain check with payment_required sent by hand refuses the same seller', async () => {
    const url = sellers.urls['bait-wallet'];
    const received = await fetch(url);
    expect(received.status).toBe(402);
    const header = received.headers.get('PAYMENT-REQUIRED') ?? '';
    const query = new URLSearchParams({ url, payment_required: header });
    const answer = await fetchFrom('198.51.100.3')(`${paid.spot.url}${CHECK}?${query}`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      verdict: 'skip',
      reason_code: 'challenge_mismatch',
      payment_terms_sha256: null,
    });
    // Without the challenge the same seller shows Spotcheck the listed wallet, and the plain check would say pay.
    const plain = await fetchFrom('198.51.100.3')(`${paid.spot.url}${CHECK}?${new URLSearchParams({ url })}`);
    expect(await plain.json()).toMatchObject({ verdict: 'pay' });
  });

  it('refuses a seller whose price rose after the check', async () => {
    const url = sellers.urls['price-rise'];
    const checked = await fetchFrom('198.51.100.4')(
      `${paid.spot.url}${CHECK}?${new URLSearchParams({ url })}`,
    );
    expect(await checked.json()).toMatchObject({ verdict: 'pay' });
    sellers.raisePrice();
    const { pay, signed } = guarded(2, '198.51.100.4');
    const before = await buyerBalance(2);
    await expect(pay(url)).rejects.toThrow(/skip\/challenge_mismatch/);
    expect(signed()).toBe(0);
    expect(await buyerBalance(2)).toBe(before);
    expect(await balance(GUARD_WALLETS['price-rise'])).toBe(0n);
  });

  it('refuses a challenge that expires before a payment could settle, signing nothing', async () => {
    const { pay, events, signed } = guarded(7, '198.51.100.9');
    const before = await buyerBalance(7);
    await expect(pay(paid.world.sellers.urls['short-lived'])).rejects.toThrow(/skip\/challenge_expired/);
    expect(signed()).toBe(0);
    expect(await buyerBalance(7)).toBe(before);
    expect(events).toMatchObject([{ type: 'refused', reason: 'challenge_expired' }]);
  });

  it('with Spotcheck stopped, closed mode pays nothing and open mode pays once and reports it', async () => {
    const gone = await startTestService(worldEnv(paid.world.state));
    const service = gone.url;
    await gone.stop();
    const seller = await balance(GUARD_WALLETS.honest);

    const closed = guarded(3, '198.51.100.5', { service, timeoutMs: 2000 });
    const closedBefore = await buyerBalance(3);
    await expect(closed.pay(sellers.urls.honest)).rejects.toThrow(/could not decide.*failing closed/);
    expect(closed.signed()).toBe(0);
    expect(await buyerBalance(3)).toBe(closedBefore);
    expect(closed.events).toMatchObject([{ type: 'undecided', failureMode: 'closed', paid: false }]);

    const open = guarded(4, '198.51.100.6', { service, timeoutMs: 2000, failureMode: 'open' });
    const openBefore = await buyerBalance(4);
    const response = await open.pay(sellers.urls.honest);
    expect(response.status).toBe(200);
    expect(open.signed()).toBe(1);
    expect(await buyerBalance(4)).toBe(openBefore - PRICE);
    expect(await balance(GUARD_WALLETS.honest)).toBe(seller + PRICE);
    expect(open.events).toMatchObject([
      { type: 'undecided', url: sellers.urls.honest, cause: 'unreachable', failureMode: 'open', paid: true },
    ]);
  });

  it('bills a check made with a hosted key as a hosted check', async () => {
    const hosted = paid.spot.service.deps.hosted;
    if (!hosted) throw new Error('hosted mode is not wired');
    const [key = ''] = await createIntegrator(hosted, 'guardrouter', '100000000');
    const { pay, events } = guarded(5, '198.51.100.7', { key, endUser: 'agent-42' });
    expect((await pay(sellers.urls.honest)).status).toBe(200);
    const approved = events.find((e) => e.type === 'approved');
    if (approved?.type !== 'approved' || approved.receiptUrl === null) throw new Error('no approval receipt');
    // Receipt URLs name the service's BASE_URL; read it from the port the test service listens on.
    const receiptPath = new URL(approved.receiptUrl).pathname;
    const receipt = (await (await fetch(`${paid.spot.url}${receiptPath}`)).json()) as {
      access: { tier: string };
    };
    expect(receipt.access.tier).toBe('hosted');
    const me = await fetch(`${paid.spot.url}/v1/integrators/me`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const account = (await me.json()) as { current_month: { calls: number; end_users: number } };
    expect(account.current_month).toMatchObject({ calls: 1, end_users: 1 });
  });

  it('gives a seller whose settlement hangs no second signature while the first may land, and one after it expired', async () => {
    const url = sellers.urls['hanging-settlement'];
    const { pay, guard, events } = guarded(6, '198.51.100.8');
    const attempt = async (count: number) => {
      const abort = new AbortController();
      const done = pay(url, { signal: abort.signal });
      await waitFor(() => sellers.hangingPayments().length === count, {
        what: `the seller to hold signature ${count}`,
      });
      abort.abort();
      await expect(done).rejects.toThrow();
    };
    await attempt(1);
    expect(guard.unresolved()).toMatchObject([{ state: 'unknown' }]);

    await expect(pay(url)).rejects.toThrow(/is pending \(unused_not_expired\).*not signing again/);
    expect(sellers.hangingPayments()).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'resign', status: 'pending', allowed: false });

    // validBefore is the client's clock plus the seller's 60 s; payment status allows a new signature 120 s after it.
    await paid.world.chain.increaseTime(60 + 120 + 60);
    await attempt(2);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'resign', status: 'not_landed', allowed: true }),
    );
    expect(await balance(GUARD_WALLETS['hanging-settlement'])).toBe(0n);
  });
});
