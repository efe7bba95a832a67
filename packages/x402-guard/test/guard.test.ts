/**
 * The guard with fakes at its seams: the x402 client's hooks, Spotcheck's HTTP answers, the clock and waiting.
 * What each test holds: which answers let a payment be signed, what is sent to Spotcheck, when an approval is
 * reused, and that no second signature follows a payment whose outcome is unknown until payment status allows it.
 */
import { describe, expect, it } from 'vitest';
import { paymentTermsSha256 } from '../../../core/payment.ts';
import { attachGuard } from '../src/guard.ts';
import { requirementSha256 } from '../src/terms.ts';
import type { GuardEvent, GuardOptions } from '../src/types.ts';
import {
  BASE_USDC,
  challenge,
  fakeClient,
  fakeSpotcheck,
  json,
  requirement,
  SELLER,
  WALLET,
} from './fakes.ts';

const HASH = requirementSha256(requirement())!;
const NOW = Date.parse('2026-11-26T12:00:00.000Z');

function setup(options: Partial<GuardOptions> = {}) {
  const spot = fakeSpotcheck();
  const client = fakeClient();
  const events: GuardEvent[] = [];
  const clock = { now: NOW, slept: [] as number[] };
  const guard = attachGuard(client.client, {
    service: 'http://spotcheck.test',
    fetch: spot.fetch,
    now: () => clock.now,
    sleep: async (ms) => {
      clock.slept.push(ms);
      clock.now += ms;
    },
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { spot, client, events, clock, guard };
}

const pay = (hash: string | null = HASH, probe: object | null = null) =>
  json(200, {
    verdict: 'pay',
    reason_code: 'price_ok',
    payment_terms_sha256: hash,
    receipt_url: 'http://spotcheck.test/v1/receipts/sc-1',
    ...(probe ? { probe } : {}),
  });
const skip = (reason: string) =>
  json(200, { verdict: 'skip', reason_code: reason, payment_terms_sha256: null, receipt_url: null });
const fresh = (probedAt = NOW) => ({ probed_at: new Date(probedAt).toISOString(), cache_ttl_s: 300 });
const status = (body: object) => json(200, { safe_to_retry_same_payload: true, ...body });

describe('the terms hash', () => {
  it('is the service’s own payment_terms_sha256, for v2 and for v1 (maxAmountRequired, v1 network name)', () => {
    const terms = { network: 'eip155:8453', asset: BASE_USDC, amountAtomic: '10000', payTo: WALLET };
    expect(HASH).toBe(paymentTermsSha256(terms));
    const v1 = {
      scheme: 'exact',
      network: 'base',
      asset: BASE_USDC,
      maxAmountRequired: '10000',
      payTo: WALLET,
    };
    expect(requirementSha256(v1)).toBe(paymentTermsSha256(terms));
    expect(requirementSha256({ ...v1, payTo: WALLET.toUpperCase().replace('0X', '0x') })).toBe(HASH);
    expect(requirementSha256({ ...requirement(), amount: '10001' })).not.toBe(HASH);
  });
});

describe('before a payment is created', () => {
  it('signs on pay with the selected requirement’s hash, having sent the challenge, the requirement and the expectations', async () => {
    const { spot, client } = setup({
      key: 'sck_live_k',
      endUser: 'agent-1',
      expect: { payTo: WALLET, network: 'eip155:8453', maxPriceUsd: '0.02' },
    });
    spot.onCheck(pay());
    await client.pay();
    expect(client.signed).toBe(1);
    const [check] = spot.checks();
    expect(check?.path).toBe('/v1/products/endpoint-spot-check');
    expect(check?.headers.get('authorization')).toBe('Bearer sck_live_k');
    expect(check?.headers.get('x-service-end-user')).toBe('agent-1');
    expect(check?.body).toMatchObject({
      url: SELLER,
      method: 'GET',
      payment_required: challenge(),
      selected_requirement: requirement(),
      pay_to: WALLET,
      network: 'eip155:8453',
      claimed_price: '0.02',
      check_expiry: 1,
      skew_s: 30,
    });
  });

  it('aborts a pay whose approved hash is not the selected requirement’s, and every other verdict', async () => {
    const { spot, client, events } = setup();
    spot.onCheck(pay(requirementSha256(requirement({ payTo: `0x${'2'.repeat(40)}` }))), pay(null));
    spot.onCheck(skip('challenge_mismatch'), json(200, { verdict: 'recheck', reason_code: 'timeout' }));
    await expect(client.pay()).rejects.toThrow(/terms_hash_mismatch/);
    await expect(client.pay()).rejects.toThrow(/terms_hash_mismatch/);
    await expect(client.pay()).rejects.toThrow(/skip\/challenge_mismatch/);
    await expect(client.pay()).rejects.toThrow(/recheck\/timeout/);
    expect(client.signed).toBe(0);
    expect(events.map((e) => e.type)).toEqual(['refused', 'refused', 'refused', 'refused']);
  });

  it('treats a challenge Spotcheck refuses to read as a refusal, even in open mode', async () => {
    const { spot, client, events } = setup({ failureMode: 'open' });
    spot.onCheck(
      json(400, { error: { code: 'payment_required_resource_mismatch', message: 'another resource' } }),
    );
    await expect(client.pay()).rejects.toThrow(/payment_required_resource_mismatch/);
    expect(client.signed).toBe(0);
    expect(events).toMatchObject([{ type: 'refused', reason: 'payment_required_resource_mismatch' }]);
  });

  it('fails closed without an answer (unreachable, 5xx, a quota 402, a body that is no answer, a timeout)', async () => {
    const { spot, client, events } = setup({ timeoutMs: 50 });
    spot.onCheck(
      () => {
        throw new TypeError('fetch failed');
      },
      json(503, { error: { code: 'database_unavailable', message: '' } }),
      json(402, { x402Version: 2, accepts: [] }),
      json(200, { hello: 'world' }),
    );
    for (let i = 0; i < 4; i += 1) await expect(client.pay()).rejects.toThrow(/could not decide/);
    const hanging = setup({ timeoutMs: 50 });
    hanging.spot.onCheck(() => new Promise<Response>(() => undefined));
    // The fake ignores the abort signal, so the timeout must come from the guard's own bound on the call.
    await expect(hanging.client.pay()).rejects.toThrow(/could not decide/);
    expect(client.signed + hanging.client.signed).toBe(0);
    expect(events.map((e) => (e.type === 'undecided' ? e.cause : e.type))).toEqual([
      'unreachable',
      'http_503',
      'http_402',
      'bad_answer',
    ]);
  });

  it('in open mode pays without an answer and reports that it could not decide', async () => {
    const { spot, client, events } = setup({ failureMode: 'open' });
    spot.onCheck(() => {
      throw new TypeError('fetch failed');
    });
    await client.pay();
    expect(client.signed).toBe(1);
    expect(events).toEqual([
      {
        type: 'undecided',
        url: SELLER,
        method: 'GET',
        cause: 'unreachable',
        failureMode: 'open',
        paid: true,
      },
    ]);
  });

  it('reuses a pay for the same URL, method and terms while its probe is fresh, and only then', async () => {
    const { spot, client, clock, events } = setup();
    spot.onCheck(pay(HASH, fresh()), pay(HASH, fresh(NOW + 301_000)), pay());
    await client.payAndSettle();
    clock.now += 299_000;
    await client.payAndSettle();
    expect(spot.checks()).toHaveLength(1);
    clock.now += 2_000;
    await client.payAndSettle();
    expect(spot.checks()).toHaveLength(2);
    // Other terms are never covered by an approval of these.
    await expect(client.payAndSettle(challenge([requirement({ amount: '20000' })]))).rejects.toThrow(
      /hash_mismatch/,
    );
    expect(spot.checks()).toHaveLength(3);
    expect(events.filter((e) => e.type === 'approved').map((e) => e.type === 'approved' && e.reused)).toEqual(
      [false, true, false],
    );
  });

  it('keeps no approval without the probe’s time (a free answer)', async () => {
    const { spot, client } = setup();
    spot.onCheck(pay(), pay());
    await client.payAndSettle();
    await client.payAndSettle();
    expect(spot.checks()).toHaveLength(2);
  });
});

describe('no second signature while the first may land', () => {
  it('asks payment status with the payload after a settlement failure, and never re-signs while pending', async () => {
    const { spot, client, events } = setup();
    spot.onCheck(pay());
    const first = await client.pay();
    await client.respond({ paymentPayload: first, settleResponse: { success: false, transaction: '' } });
    spot.onStatus(
      status({
        status: 'pending',
        reason: 'unused_not_expired',
        safe_to_resign: false,
        wait_until: '2026-11-26T12:03:00Z',
      }),
    );
    await expect(client.pay()).rejects.toThrow(/pending.*ask again after 2026-11-26T12:03:00Z/);
    expect(client.signed).toBe(1);
    const [asked] = spot.statuses();
    expect(asked?.body['payment_payload']).toBe(Buffer.from(JSON.stringify(first)).toString('base64'));
    expect(asked?.body['seller_url']).toBe(SELLER);
    expect(spot.checks()).toHaveLength(1);
    expect(events.map((e) => e.type)).toEqual(['approved', 'outcome_unknown', 'resign']);
  });

  it('waits for wait_until when allowed, then signs once payment status says it is safe', async () => {
    const { spot, client, clock } = setup({ pendingWaitMs: 300_000 });
    spot.onCheck(pay(), pay());
    const first = await client.pay();
    await client.respond({ paymentPayload: first, error: new Error('socket hang up') });
    const waitUntil = new Date(NOW + 180_000).toISOString();
    spot.onStatus(
      status({ status: 'pending', safe_to_resign: false, wait_until: waitUntil }),
      status({ status: 'not_landed', reason: 'expired_unused', safe_to_resign: true }),
    );
    await client.pay();
    expect(client.signed).toBe(2);
    expect(clock.slept).toEqual([181_000]);
  });

  it('after landed, refuses to pay again without asking twice, until the caller forgets the URL', async () => {
    const { spot, client, guard } = setup();
    spot.onCheck(pay(), pay());
    const first = await client.pay();
    await client.respond({ paymentPayload: first, settleResponse: { success: false } });
    spot.onStatus(status({ status: 'landed', safe_to_resign: false, tx: { hash: '0xabc' } }));
    await expect(client.pay()).rejects.toThrow(/landed in 0xabc/);
    await expect(client.pay()).rejects.toThrow(/landed in 0xabc/);
    expect(spot.statuses()).toHaveLength(1);
    guard.forget(SELLER);
    await client.pay();
    expect(client.signed).toBe(2);
  });

  it('does not sign again when payment status gives no answer, even in open mode', async () => {
    const { spot, client } = setup({ failureMode: 'open' });
    spot.onCheck(pay());
    const first = await client.pay();
    await client.respond({ paymentPayload: first, paymentRequired: challenge() });
    spot.onStatus(json(503, { error: { code: 'chain_unavailable', message: '' } }));
    await expect(client.pay()).rejects.toThrow(/payment status gave no answer/);
    expect(client.signed).toBe(1);
  });

  it('forgets a payment once its settlement succeeded', async () => {
    const { spot, client, guard } = setup();
    spot.onCheck(pay(), pay());
    const first = await client.pay();
    await client.respond({ paymentPayload: first, settleResponse: { success: true, transaction: '0x1' } });
    await client.pay();
    expect(spot.statuses()).toHaveLength(0);
    expect(guard.unresolved()).toHaveLength(1);
  });

  it('without track(), a payment never reported counts as unknown', async () => {
    const { spot, client } = setup();
    spot.onCheck(pay());
    await client.pay();
    spot.onStatus(status({ status: 'pending', safe_to_resign: false, wait_until: '2026-11-26T12:03:00Z' }));
    await expect(client.pay()).rejects.toThrow(/pending/);
  });
});

describe('track()', () => {
  it('checks the requested URL and method, and marks a payment unknown when its request throws', async () => {
    const { spot, client, guard, events } = setup();
    spot.onCheck(pay());
    const paying = guard.track(async () => {
      await client.pay();
      throw new TypeError('fetch failed');
    });
    await expect(paying('http://seller.test/weather#x', { method: 'POST' })).rejects.toThrow('fetch failed');
    expect(spot.checks()[0]?.body).toMatchObject({ url: SELLER, method: 'POST' });
    expect(events.at(-1)).toEqual({ type: 'outcome_unknown', url: SELLER, cause: 'transport_error' });
    expect(guard.unresolved()).toMatchObject([{ url: SELLER, state: 'unknown' }]);
  });

  it('lets a concurrent purchase of the same URL sign while the first is still in flight', async () => {
    const { spot, client, guard } = setup();
    spot.onCheck(pay(), pay());
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const settled = () =>
      new Response('{}', {
        headers: { 'PAYMENT-RESPONSE': Buffer.from('{"success":true}').toString('base64') },
      });
    const slow = guard.track(async () => {
      await client.pay();
      await held;
      return settled();
    });
    const quick = guard.track(async () => {
      await client.pay();
      return settled();
    });
    const first = slow(SELLER);
    await expect.poll(() => client.signed).toBe(1);
    await quick(SELLER);
    release();
    await first;
    expect(client.signed).toBe(2);
    expect(spot.statuses()).toHaveLength(0);
    expect(guard.unresolved()).toEqual([]);
  });
});

describe('with the official client', () => {
  it('composes with its spend controls: what they refuse never reaches Spotcheck, what they allow is checked', async () => {
    const { x402Client } = await import('@x402/core/client');
    const { ExactEvmScheme } = await import('@x402/evm/exact/client');
    const { generatePrivateKey, privateKeyToAccount } = await import('viem/accounts');
    const spot = fakeSpotcheck();
    const client = new x402Client().register(
      'eip155:*',
      new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())),
    );
    attachGuard(client, { service: 'http://spotcheck.test', fetch: spot.fetch });
    client.setSpendControls({ maxAmountPerPayment: '$0.001' });
    await expect(client.createPaymentPayload(challenge() as never)).rejects.toThrow(/spendControls/);
    expect(spot.checks()).toHaveLength(0);
    client.setSpendControls({ maxAmountPerPayment: '$0.10' });
    spot.onCheck(pay());
    const payload = await client.createPaymentPayload(challenge() as never);
    expect(payload.accepted).toEqual(requirement());
    expect(spot.checks()).toHaveLength(1);
  });
});
