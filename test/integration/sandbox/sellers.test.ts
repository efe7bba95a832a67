/**
 * The sandbox seller fleet answers on the wire exactly as its README and expectation table say: one raw request
 * per seller, no Spotcheck code involved, then a close that leaves no handle behind.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ATTACKER_WALLET,
  BASE_DAI,
  BASE_USDC_TOKEN,
  BIG_DESCRIPTION_CHARS,
  createOfflineFacilitator,
  type ExpectedPayment,
  FLEET_WALLET,
  HUGE_BODY_BYTES,
  LISTING_WALLET,
  LOOKALIKE_USDC,
  POLYGON_USDC_TOKEN,
  ROTATING_WALLETS,
  SELLER_NAMES,
  type SellerFleet,
  type SellerName,
  startSellers,
} from '../../../sandbox/sellers/index.ts';
import { waitFor } from '../../helpers/wait.ts';

const V1_NETWORKS: Record<string, string> = { base: 'eip155:8453', 'base-sepolia': 'eip155:84532' };
/** Sellers that need a special request (timeouts, huge payloads); covered one by one below. */
const SPECIAL = new Set<SellerName>(['hang', 'reset', 'slow-drip', 'huge-body', 'big-header']);

let fleet: SellerFleet;
let serversBefore = 0;

beforeAll(async () => {
  serversBefore = countResources('TCPServerWrap');
  fleet = await startSellers();
});
afterAll(() => fleet?.close());

describe('startSellers', () => {
  it('gives every seller its own port, a URL and an expectation', () => {
    expect(Object.keys(fleet.urls).sort()).toEqual([...SELLER_NAMES].sort());
    expect(Object.keys(fleet.expectations).sort()).toEqual([...SELLER_NAMES].sort());
    expect(SELLER_NAMES).toHaveLength(31);
    const ports = new Set(Object.values(fleet.urls).map((url) => new URL(url).port));
    expect(ports.size).toBe(SELLER_NAMES.length);
    expect(fleet.payTo).toBe(FLEET_WALLET);
  });

  it('serves, for every default or variant `pay`, an option equal to the expected payment', async () => {
    const checked: string[] = [];
    for (const name of SELLER_NAMES.filter((n) => !SPECIAL.has(n))) {
      const expectation = fleet.expectations[name];
      const payments = [expectation.payment, expectation.variant?.payment].filter((p) => p !== undefined);
      if (payments.length === 0) continue;
      const options = await liveOptions(fleet.urls[name], expectation.method ?? 'GET');
      for (const payment of payments) expect(options, name).toContainEqual(payment);
      checked.push(name);
    }
    expect(checked).toEqual([
      'sdk-ok',
      'sdk-post',
      'sdk-expensive',
      'sdk-two-options',
      'v1-only',
      'broken-header-v1-body',
      'v2-body-only',
      'post-only',
      'wrong-network',
      'hostile-first',
      'short-lived',
      'redirect-chain',
      'pay-to-listing',
    ]);
  });
});

describe('SDK sellers', () => {
  it('sdk-ok: the SDK v2 header decodes to Base USDC $0.01 with a bazaar declaration; body {}', async () => {
    const res = await fetch(fleet.urls['sdk-ok']);
    expect(res.status).toBe(402);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(fleet.urls['sdk-ok']);
    expect(required.accepts).toEqual([
      expect.objectContaining({
        network: 'eip155:8453',
        amount: '10000',
        asset: BASE_USDC_TOKEN.asset,
        payTo: FLEET_WALLET,
      }),
    ]);
    expect(required.extensions?.['bazaar']).toMatchObject({
      info: { input: { type: 'http', method: 'GET' } },
    });
    expect(await res.json()).toEqual({});
  });

  it('sdk-post: GET answers 405 with Allow: POST, POST answers the SDK 402', async () => {
    const get = await fetch(fleet.urls['sdk-post']);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(get.headers.get('payment-required')).toBeNull();
    const post = await fetch(fleet.urls['sdk-post'], { method: 'POST' });
    expect(post.status).toBe(402);
    const required = decodePaymentRequiredHeader(post.headers.get('payment-required')!);
    expect(required.extensions?.['bazaar']).toMatchObject({
      info: { input: { method: 'POST', bodyType: 'json' } },
    });
  });

  it('sdk-base-sepolia, sdk-expensive, sdk-two-options quote what they are named for', async () => {
    const sepolia = await sdkAccepts('sdk-base-sepolia');
    expect(sepolia).toEqual([
      expect.objectContaining({ network: 'eip155:84532', asset: expect.any(String) }),
    ]);
    expect(sepolia[0]!.asset).not.toBe(BASE_USDC_TOKEN.asset);
    expect(await sdkAccepts('sdk-expensive')).toEqual([expect.objectContaining({ amount: '500000' })]);
    const two = await sdkAccepts('sdk-two-options');
    expect(two.map((a) => [a.network, a.asset])).toEqual([
      ['eip155:8453', BASE_USDC_TOKEN.asset],
      ['eip155:137', POLYGON_USDC_TOKEN.asset],
    ]);
  });
});

describe('hand-written sellers', () => {
  it('free-trial: a valid 402 plus X-Free-Trial-Remaining: 3', async () => {
    const res = await fetch(fleet.urls['free-trial']);
    expect(res.headers.get('x-free-trial-remaining')).toBe('3');
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts).toHaveLength(1);
  });

  it('free-trial-unlimited: a valid 402 plus X-Free-Trial: unlimited, and no trial count header', async () => {
    const res = await fetch(fleet.urls['free-trial-unlimited']);
    expect(res.status).toBe(402);
    expect(res.headers.get('x-free-trial')).toBe('unlimited');
    expect(res.headers.get('x-free-trial-remaining')).toBeNull();
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts).toEqual([
      expect.objectContaining({ network: 'eip155:8453', asset: BASE_USDC_TOKEN.asset, payTo: FLEET_WALLET }),
    ]);
  });

  it('no-paywall answers 200 JSON and server-error 503, neither with x402 terms', async () => {
    const free = await fetch(fleet.urls['no-paywall']);
    expect([free.status, free.headers.get('payment-required')]).toEqual([200, null]);
    expect(await free.json()).toMatchObject({ ok: true });
    const down = await fetch(fleet.urls['server-error']);
    expect([down.status, down.headers.get('retry-after')]).toEqual([503, '30']);
  });

  it('broken-header: the header does not decode and the body is empty', async () => {
    const res = await fetch(fleet.urls['broken-header']);
    expect(res.status).toBe(402);
    expect(() => decodePaymentRequiredHeader(res.headers.get('payment-required')!)).toThrow();
    expect(await res.text()).toBe('');
  });

  it('broken-header-v1-body: the header is a bare accepts array, the body a valid v1 challenge', async () => {
    const res = await fetch(fleet.urls['broken-header-v1-body']);
    const header: unknown = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(Array.isArray(header)).toBe(true);
    expect(await res.json()).toMatchObject({
      x402Version: 1,
      accepts: [{ network: 'base', payTo: FLEET_WALLET }],
    });
  });

  it('v2-body-only and the v1 sellers carry no PAYMENT-REQUIRED header', async () => {
    for (const name of ['v2-body-only', 'v1-only', 'testnet-only', 'price-decimal'] as const) {
      const res = await fetch(fleet.urls[name]);
      expect([res.status, res.headers.get('payment-required')], name).toEqual([402, null]);
    }
    const body = await (await fetch(fleet.urls['v2-body-only'])).json();
    expect(body).toMatchObject({ x402Version: 2, accepts: [{ network: 'eip155:8453' }] });
    const decimal = await (await fetch(fleet.urls['price-decimal'])).json();
    expect(decimal.accepts[0].maxAmountRequired).toBe('0.01');
    const testnet = await (await fetch(fleet.urls['testnet-only'])).json();
    expect(testnet.accepts[0].network).toBe('base-sepolia');
  });

  it('post-only: GET 405, POST 402', async () => {
    expect((await fetch(fleet.urls['post-only'])).status).toBe(405);
    const post = await fetch(fleet.urls['post-only'], { method: 'POST', body: '{}' });
    expect(post.status).toBe(402);
    expect(decodePaymentRequiredHeader(post.headers.get('payment-required')!).x402Version).toBe(2);
  });

  it('not-usdc, wrong-network, hostile-first and pay-to-listing quote the traps they are named for', async () => {
    expect(await liveOptions(fleet.urls['not-usdc'])).toEqual([
      expect.objectContaining({ network: 'eip155:8453', asset: BASE_DAI.asset }),
    ]);
    expect(await liveOptions(fleet.urls['wrong-network'])).toEqual([
      expect.objectContaining({ network: 'eip155:137', asset: POLYGON_USDC_TOKEN.asset }),
    ]);
    const hostile = await liveOptions(fleet.urls['hostile-first']);
    expect(hostile[0]).toMatchObject({ asset: LOOKALIKE_USDC.asset, payTo: ATTACKER_WALLET });
    expect(hostile[1]).toMatchObject({ asset: BASE_USDC_TOKEN.asset, payTo: FLEET_WALLET });
    expect(await liveOptions(fleet.urls['pay-to-listing'])).toEqual([
      expect.objectContaining({ payTo: LISTING_WALLET }),
    ]);
  });

  it('short-lived: validBefore is about 5 s away and maxTimeoutSeconds is 5', async () => {
    const res = await fetch(fleet.urls['short-lived']);
    const accept = decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts[0]!;
    const left = Number((accept as { validBefore?: string }).validBefore) - Date.now() / 1000;
    expect(left).toBeGreaterThan(3);
    expect(left).toBeLessThanOrEqual(5);
    expect(accept.maxTimeoutSeconds).toBe(5);
  });

  it('wallet-rotates: consecutive requests ask for the two rotating wallets in turn', async () => {
    const first = (await liveOptions(fleet.urls['wallet-rotates']))[0]!.payTo;
    const second = (await liveOptions(fleet.urls['wallet-rotates']))[0]!.payTo;
    expect(new Set([first, second])).toEqual(new Set(ROTATING_WALLETS));
  });

  it('redirects: chain of 3 then a 402, a chain of 4, and a hop into 10.0.0.1', async () => {
    expect(await redirectsBefore402(fleet.urls['redirect-chain'])).toBe(3);
    expect(await redirectsBefore402(fleet.urls['redirect-too-long'])).toBe(4);
    const res = await fetch(fleet.urls['redirect-private'], { redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([302, 'http://10.0.0.1/']);
  });
});

describe('transport sellers', () => {
  it('hang: the connection is accepted but no answer ever comes', async () => {
    const started = Date.now();
    const error = await fetch(fleet.urls.hang, { signal: AbortSignal.timeout(300) }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('reset: the connection is reset', async () => {
    const error = await fetch(fleet.urls.reset).catch((e: unknown) => e);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('ECONNRESET');
  });

  it('huge-body: a decodable header, then a chunked body of at least 20 MiB', async () => {
    const res = await fetch(fleet.urls['huge-body']);
    expect(res.headers.get('content-length')).toBeNull();
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts).toHaveLength(1);
    const total = await countBytes(res);
    expect(total).toBeGreaterThanOrEqual(HUGE_BODY_BYTES);
  });

  it('slow-drip: status and header at once, then at most a byte or two a second', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const res = await fetch(fleet.urls['slow-drip'], { signal: abort.signal });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).x402Version).toBe(2);
    const timer = setTimeout(() => abort.abort(), 1500);
    let received = 0;
    await expect(countBytes(res, (n) => (received = n))).rejects.toThrow();
    clearTimeout(timer);
    expect(received).toBeLessThanOrEqual(2);
  });

  it('big-header: over 40 KB, too big for fetch, decodable with a larger header limit', async () => {
    await expect(fetch(fleet.urls['big-header'])).rejects.toThrow();
    const { status, headers } = await rawGet(fleet.urls['big-header'], 128 * 1024);
    const header = String(headers['payment-required']);
    expect(status).toBe(402);
    expect(header.length).toBeGreaterThan(40 * 1024);
    expect(decodePaymentRequiredHeader(header).resource.description).toHaveLength(BIG_DESCRIPTION_CHARS);
  });
});

describe('facilitator option', () => {
  it('routes a paid request of an SDK seller to the given facilitator, and still initializes Polygon', async () => {
    const verify = vi.fn<FacilitatorClient['verify']>(async () => ({ isValid: false, invalidReason: 'spy' }));
    const spy: FacilitatorClient = {
      getSupported: vi.fn(async () => ({
        kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' as const }],
        extensions: [],
        signers: {},
      })),
      verify,
      settle: vi.fn(),
    };
    const own = await startSellers({ facilitator: spy, payTo: LISTING_WALLET });
    try {
      expect(spy.getSupported).toHaveBeenCalled();
      expect((await sdkAccepts('sdk-two-options', own)).map((a) => a.network)).toContain('eip155:137');
      // Anvil's first default key: a throwaway signer, nothing is settled.
      const account = privateKeyToAccount(
        '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
      );
      const payFetch = wrapFetchWithPayment(
        fetch,
        new x402Client().register('eip155:*', new ExactEvmScheme(account)),
      );
      const res = await payFetch(own.urls['sdk-ok']);
      expect(res.status).toBe(402);
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify.mock.calls[0]![1]).toMatchObject({ network: 'eip155:8453', payTo: LISTING_WALLET });
    } finally {
      await own.close();
    }
  });

  it('offline facilitator: supports exact on Base, Base Sepolia and Polygon, refuses verify and settle', async () => {
    const offline = createOfflineFacilitator();
    const { kinds } = await offline.getSupported();
    expect(kinds.map((k) => `${k.x402Version}/${k.scheme}/${k.network}`)).toEqual([
      '2/exact/eip155:8453',
      '2/exact/eip155:84532',
      '2/exact/eip155:137',
    ]);
    const requirements = {
      scheme: 'exact',
      network: 'eip155:8453' as const,
      amount: '10000',
      asset: BASE_USDC_TOKEN.asset,
      payTo: FLEET_WALLET,
      maxTimeoutSeconds: 60,
      extra: {},
    };
    const payload = { x402Version: 2, accepted: requirements, payload: {} };
    expect(await offline.verify(payload, requirements)).toMatchObject({ isValid: false });
    expect(await offline.settle(payload, requirements)).toMatchObject({ success: false, transaction: '' });
  });
});

// Last: the suite runs in file order, and every seller is used above.
describe('close', () => {
  it('stops every seller and leaves no server handle, even with hang and slow-drip connections open', async () => {
    // Node names every socket a server accepts on its `net.server.socket` channel; each request below has a
    // connection of its own, so the close starts once both sellers hold theirs.
    const accepted = new Set<number>();
    const onAccepted = (message: unknown) =>
      accepted.add((message as { socket: Socket }).socket.localPort ?? 0);
    const portOf = (url: string) => Number(new URL(url).port);
    subscribe('net.server.socket', onAccepted);
    const hanging = heldGet(fleet.urls.hang);
    const dripping = heldGet(fleet.urls['slow-drip']);
    try {
      await waitFor(
        () => accepted.has(portOf(fleet.urls.hang)) && accepted.has(portOf(fleet.urls['slow-drip'])),
        { what: 'the hang and slow-drip sellers to accept their connections' },
      );
    } finally {
      unsubscribe('net.server.socket', onAccepted);
    }
    await fleet.close();
    await fleet.close();
    expect(await hanging).toBeInstanceOf(Error);
    expect(await dripping).toBeInstanceOf(Error);
    // A server's handle leaves the list of active resources once libuv has closed it; a leaked one never does.
    await waitFor(() => countResources('TCPServerWrap') === serversBefore, {
      what: `${serversBefore} TCP server handles, as before the fleet started`,
    });
    const refused = await fetch(fleet.urls['sdk-ok']).catch((e: unknown) => e);
    expect((refused as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });
});

/** Reads a body to the end, reporting the running byte count. */
async function countBytes(res: Response, progress: (bytes: number) => void = () => {}): Promise<number> {
  const reader = res.body!.getReader();
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return total;
    total += value.byteLength;
    progress(total);
  }
}

function countResources(kind: string): number {
  return process.getActiveResourcesInfo().filter((r) => r === kind).length;
}

async function sdkAccepts(name: SellerName, from: SellerFleet = fleet) {
  const res = await fetch(from.urls[name]);
  return decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts;
}

/** The options of a 402 wherever they travel (v2 header, else the body), v1 network names mapped to CAIP-2. */
async function liveOptions(url: string, method: 'GET' | 'POST' = 'GET'): Promise<ExpectedPayment[]> {
  const res = await fetch(url, { method });
  expect(res.status, url).toBe(402);
  const header = res.headers.get('payment-required');
  const decoded: unknown = header ? decodePaymentRequiredHeader(header) : null;
  const required = (Array.isArray(decoded) || decoded === null ? await res.json() : decoded) as {
    accepts: { network: string; asset: string; amount?: string; maxAmountRequired?: string; payTo: string }[];
  };
  return required.accepts.map((a) => ({
    network: V1_NETWORKS[a.network] ?? a.network,
    asset: a.asset,
    amountAtomic: a.amount ?? a.maxAmountRequired ?? '',
    payTo: a.payTo,
  }));
}

async function redirectsBefore402(url: string): Promise<number> {
  let hops = 0;
  let next = url;
  for (;;) {
    const res = await fetch(next, { redirect: 'manual' });
    if (res.status === 402) return hops;
    expect(res.status).toBeGreaterThanOrEqual(300);
    expect(res.status).toBeLessThan(400);
    next = new URL(res.headers.get('location')!, next).href;
    hops += 1;
  }
}

/**
 * A GET on a connection of its own (never a pooled one); resolves with the error that cut it, or 'complete' once
 * its answer came to the end.
 */
function heldGet(url: string): Promise<unknown> {
  return new Promise((resolve) => {
    httpGet(url, { agent: false }, (res) => {
      res.resume();
      res.on('close', () => resolve(res.complete ? 'complete' : new Error('the connection was cut')));
    }).on('error', resolve);
  });
}

function rawGet(
  url: string,
  maxHeaderSize: number,
): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { maxHeaderSize }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    }).on('error', reject);
  });
}
