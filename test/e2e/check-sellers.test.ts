/**
 * The endpoint check end to end: the real service on a port, probing the sandbox fleet (sellers built with the
 * official SDK and by hand) through the real SSRF-gated prober. Every reason code of docs/api.md §3.1 is reached, and
 * no refused challenge is ever answered `pay`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as ed from '@noble/ed25519';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REASONS } from '../../core/reasons.ts';
import { dataPaths } from '../../io/data-paths.ts';
import { publishToInbox } from '../../io/inbox.ts';
import { ATTACKER_WALLET, ROTATING_WALLETS } from '../../sandbox/sellers/constants.ts';
import { buildExpectations, type ExpectedPayment } from '../../sandbox/sellers/expectations.ts';
import {
  FLEET_WALLET,
  SELLER_NAMES,
  type SellerFleet,
  type SellerName,
  startSellers,
} from '../../sandbox/sellers/index.ts';
import { EXEMPT_SECRET, startTestService, type TestService } from '../helpers/service.ts';

let fleet: SellerFleet;
let spot: TestService;
const reached = new Set<string>();

beforeAll(async () => {
  fleet = await startSellers();
  spot = await startTestService();
});
afterAll(async () => {
  await spot?.stop();
  await fleet?.close();
});

async function check(
  params: Record<string, string>,
  service: TestService = spot,
): Promise<Record<string, unknown>> {
  const query = new URLSearchParams(params);
  const res = await fetch(`${service.url}/v1/products/endpoint-spot-check?${query}`, {
    headers: { 'x-service-key': EXEMPT_SECRET },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Record<string, unknown>;
  reached.add(String(body.reason));
  return body;
}

/** The approved option of a `pay` answer must be exactly the expected one (docs/api.md §2.2). */
function expectPayment(body: Record<string, unknown>, expected: ExpectedPayment): void {
  const payment = body.payment as {
    network: string;
    asset: string;
    amount: { atomic: string };
    pay_to: string;
  };
  expect(payment.network).toBe(expected.network);
  expect(payment.asset.toLowerCase()).toBe(expected.asset.toLowerCase());
  expect(payment.amount.atomic).toBe(expected.amountAtomic);
  expect(payment.pay_to.toLowerCase()).toBe(expected.payTo.toLowerCase());
}

describe('every seller of the fleet gets the verdict docs/api.md §3.1 gives', () => {
  // The hang and slow-drip sellers each take the whole 5 s budget: probe them all at once.
  const answers = new Map<SellerName, Promise<Record<string, unknown>>>();
  const answer = (name: SellerName) => {
    if (!answers.has(name)) answers.set(name, check({ url: fleet.urls[name] }));
    return answers.get(name)!;
  };
  beforeAll(async () => {
    await Promise.all(SELLER_NAMES.map(answer));
  }, 30_000);

  it.each(SELLER_NAMES.map((name) => [name]))('%s', async (name) => {
    const expected = fleet.expectations[name];
    const body = await answer(name);
    expect({ verdict: body.verdict, reason: body.reason }, expected.notes).toEqual({
      verdict: expected.verdict,
      reason: expected.reason,
    });
    expect(body.reason_code).toBe(expected.reason);
    // Present only where the 402 came from the POST retry of a GET answered 405 (docs/decisions.md "The probe").
    expect((body.probe as { method_used?: string }).method_used).toBe(
      expected.method === 'POST' ? 'POST' : undefined,
    );
    if (body.verdict === 'pay') {
      expect(body.payment_terms_sha256).toMatch(/^[0-9a-f]{64}$/);
      if (expected.payment) expectPayment(body, expected.payment);
    } else {
      expect(body.payment).toBeNull();
      expect(body.payment_terms_sha256).toBeNull();
    }
  });

  // The table is known before the fleet starts: only sellers with a variant get a case.
  const withVariant = SELLER_NAMES.filter(
    (name) => buildExpectations(FLEET_WALLET)[name].variant !== undefined,
  );
  it.each(withVariant.map((name) => [name]))('%s with non-default expectations', async (name) => {
    const variant = fleet.expectations[name].variant!;
    const params: Record<string, string> = { url: fleet.urls[name] };
    for (const [key, value] of Object.entries(variant.request)) {
      params[key] = key === 'check_expiry' ? (value ? '1' : '0') : String(value);
    }
    const body = await check(params);
    expect({ verdict: body.verdict, reason: body.reason }).toEqual({
      verdict: variant.verdict,
      reason: variant.reason,
    });
    if (variant.payment) {
      expect(body.payment_terms_sha256).toMatch(/^[0-9a-f]{64}$/);
      expectPayment(body, variant.payment);
    }
  });

  it('not-usdc (DAI on Base) reports no USD price, never DAI units read as USDC', async () => {
    const body = await answer('not-usdc');
    expect(body).toMatchObject({ reason_code: 'asset_not_usdc', quoted_price_usd: null });
    const observations = body.history_observations as Array<{
      price_usd: number | null;
      amount_atomic: string;
    }>;
    expect(observations[0]).toMatchObject({ price_usd: null });
    expect(BigInt(observations[0]!.amount_atomic)).toBeGreaterThan(10n ** 15n);
  });

  it('free-trial reports the remaining trial calls the seller announced', async () => {
    const body = await answer('free-trial');
    expect(body).toMatchObject({
      verdict: 'recheck',
      reason_code: 'free_trial_active',
      free_trial_remaining: 3,
    });
  });

  it('free-trial-unlimited announces a trial whose count does not parse: free_trial_remaining null', async () => {
    const body = await answer('free-trial-unlimited');
    expect(body).toMatchObject({ verdict: 'recheck', reason_code: 'free_trial_active', payment: null });
    expect(body).toHaveProperty('free_trial_remaining', null);
  });
});

describe('wallet-rotates end to end', () => {
  it('a fresh probe of the same URL after the cache window sees the other wallet: pay_to_changed true', async () => {
    // The probe cache keeps an outcome 300 s (docs/api.md §8): move the service clock past it so the second check of
    // the SAME endpoint probes again and meets the seller's other wallet.
    let clock = Date.now();
    const rotating = await startTestService({}, { now: () => new Date(clock) });
    try {
      const url = fleet.urls['wallet-rotates'];
      const first = await check({ url }, rotating);
      clock += 301_000;
      const second = await check({ url }, rotating);
      for (const body of [first, second]) {
        expect(body).toMatchObject({ verdict: 'pay', reason: 'price_ok', probe: { cached: false } });
      }
      expect(first.pay_to_changed).toBeNull();
      expect(second.pay_to_changed).toBe(true);
      const seen = [first.pay_to, second.pay_to].map((w) => String(w).toLowerCase()).sort();
      expect(seen).toEqual(ROTATING_WALLETS.map((w) => w.toLowerCase()).sort());
    } finally {
      await rotating.stop();
    }
  });
});

describe('listings feed the expectations', () => {
  it('a listing price above the live quote gives price_below_listing, a listed wallet mismatch pay_to_mismatch', async () => {
    const listings = [
      {
        url: fleet.urls['sdk-ok'],
        price_usd: 0.05,
        network: 'eip155:8453',
        pay_to: FLEET_WALLET,
        source: 'e2e',
      },
      {
        url: fleet.urls['v1-only'],
        price_usd: 0.01,
        network: 'eip155:8453',
        pay_to: '0x000000000000000000000000000000000000dEaD',
        source: 'e2e',
      },
    ];
    await publishToInbox(dataPaths(spot.dataDir).inbox, 'e2e-listings', JSON.stringify(listings));
    await spot.service.drainInbox();
    const below = await check({ url: fleet.urls['sdk-ok'] });
    expect(below).toMatchObject({
      verdict: 'pay',
      reason: 'price_below_listing',
      expected_source: 'listing',
    });
    expect(below.expected_pay_to).toBe(FLEET_WALLET);
    const mismatch = await check({ url: fleet.urls['v1-only'] });
    expect(mismatch).toMatchObject({
      verdict: 'skip',
      reason: 'pay_to_mismatch',
      expected_source: 'listing',
    });
  });
});

describe('the forgery gate', () => {
  it('refuses loopback when the allow list does not name it, without a verdict other than skip', async () => {
    const gated = await startTestService({ PROBE_ALLOW_CIDRS: '' });
    try {
      const res = await fetch(
        `${gated.url}/v1/products/endpoint-spot-check?${new URLSearchParams({ url: fleet.urls['sdk-ok'] })}`,
        { headers: { 'x-service-key': EXEMPT_SECRET } },
      );
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ verdict: 'skip', reason: 'ssrf_blocked' });
      reached.add('ssrf_blocked');

      // A seller of its own that counts every socket and request: the gate must refuse before connecting.
      let sockets = 0;
      let requests = 0;
      const witness = createServer((_req, res) => {
        requests++;
        res.writeHead(402, { 'content-type': 'application/json' }).end('{}');
      });
      witness.on('connection', () => sockets++);
      await new Promise<void>((resolve) => witness.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = witness.address() as AddressInfo;
        const blocked = await check({ url: `http://127.0.0.1:${port}/paid` }, gated);
        expect(blocked).toMatchObject({ verdict: 'skip', reason: 'ssrf_blocked' });
        expect({ sockets, requests }).toEqual({ sockets: 0, requests: 0 });
        // Control: the same URL through the loopback-allowing service does reach the witness, so 0 means refused.
        await check({ url: `http://127.0.0.1:${port}/paid` });
        expect(requests).toBeGreaterThan(0);
      } finally {
        witness.closeAllConnections();
        await new Promise<void>((resolve) => witness.close(() => resolve()));
      }
    } finally {
      await gated.stop();
    }
  });
});

describe('connections to a seller', () => {
  it('checks of one seller within a second share a connection; a POST check opens its own', async () => {
    let sockets = 0;
    const requests: string[] = [];
    const seller = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(402, { 'content-type': 'application/json' }).end('{}');
    });
    seller.on('connection', () => sockets++);
    await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = seller.address() as AddressInfo;
      for (const path of ['/a', '/b', '/c']) await check({ url: `http://127.0.0.1:${port}${path}` });
      expect({ sockets, requests }).toEqual({ sockets: 1, requests: ['GET /a', 'GET /b', 'GET /c'] });
      await check({ url: `http://127.0.0.1:${port}/d`, method: 'POST' });
      expect({ sockets, requests: requests.length }).toEqual({ sockets: 2, requests: 4 });
    } finally {
      seller.closeAllConnections();
      await new Promise<void>((resolve) => seller.close(() => resolve()));
    }
  });
});

describe('receipts', () => {
  it('every answer names a receipt that verifies with an independent Ed25519 implementation', async () => {
    const body = await check({ url: fleet.urls['sdk-ok'], claimed_price: '0.01' });
    expect(String(body.receipt_url)).toBe(`${spot.config.baseUrl}/v1/receipts/${body.receipt_id}`);
    const receipt = (await (await fetch(`${spot.url}/v1/receipts/${body.receipt_id}`)).json()) as Record<
      string,
      unknown
    >;
    const jwks = (await (await fetch(`${spot.url}/.well-known/jwks.json`)).json()) as {
      keys: Array<{ kid: string; x: string }>;
    };
    const key = jwks.keys.find((item) => item.kid === receipt.kid);
    expect(key).toBeDefined();
    const { signature, ...signed } = receipt;
    const bytes = new TextEncoder().encode(canonicalize(signed));
    const ok = await ed.verifyAsync(
      Buffer.from(String(signature), 'base64url'),
      bytes,
      Buffer.from(String(key?.x), 'base64url'),
    );
    expect(ok).toBe(true);
    const tampered = new TextEncoder().encode(canonicalize({ ...signed, verdict: 'skip' }));
    expect(
      await ed.verifyAsync(
        Buffer.from(String(signature), 'base64url'),
        tampered,
        Buffer.from(String(key?.x), 'base64url'),
      ),
    ).toBe(false);
    expect(receipt).toMatchObject({ id: body.receipt_id, verdict: 'pay', check_type: 'dry-run' });
    expect(receipt).not.toHaveProperty('history_observations');
  });
});

describe('a challenge the client received', () => {
  it("skips sdk-ok's own 402 sent back with another wallet (challenge_mismatch)", async () => {
    const unpaid = await fetch(fleet.urls['sdk-ok']);
    const required = JSON.parse(
      Buffer.from(unpaid.headers.get('payment-required') ?? '', 'base64').toString('utf8'),
    ) as { accepts: Array<Record<string, unknown>> };
    required.accepts = required.accepts.map((accept) => ({ ...accept, payTo: ATTACKER_WALLET }));
    const payment_required = Buffer.from(JSON.stringify(required), 'utf8').toString('base64');
    const body = await check({ url: fleet.urls['sdk-ok'], payment_required });
    expect({ verdict: body.verdict, reason: body.reason }).toEqual({
      verdict: 'skip',
      reason: 'challenge_mismatch',
    });
  });
});

describe('coverage of the reason codes', () => {
  it('reached every reason code of docs/api.md §3.1 end to end', () => {
    expect([...REASONS].filter((reason) => !reached.has(reason))).toEqual([]);
  });
});
