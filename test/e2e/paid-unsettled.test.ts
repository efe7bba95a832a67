/**
 * No paid answer, receipt or observation without a landed settlement, end to end: the real
 * service on a port wired to the sandbox (SDK facilitator over HTTP, anvil with Circle's FiatToken), the checked URL a
 * loopback endpoint of the caller's own. Each case pays with an EIP-3009 authorization that passes verify and then
 * cannot (or is said to) settle; nothing derived from the call may become public, and no money or free use moves.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { PaymentRequired } from '@x402/core/types';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeUrl } from '../../core/url.ts';
import { dataPaths } from '../../io/data-paths.ts';
import { cancelAuthorization, signAuthorization } from '../../sandbox/eip3009.ts';
import { type RawServer, startHttpServer } from '../fixtures/raw-server.ts';
import { fetchFrom, type PaidWorld, requirementOf, startPaidWorld } from '../helpers/world.ts';

const CHECK = '/v1/products/endpoint-spot-check';
const STATUS = '/v1/products/payment-status';
let paid: PaidWorld;
let target: RawServer;
/** What the target does when probed; set by each test. */
let onProbe: () => Promise<void> = async () => {};

beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 5 });
  target = await startHttpServer((_req, res) => {
    void onProbe().finally(() => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('no paywall here');
    });
  });
});
afterAll(async () => {
  await target?.close();
  await paid?.stop();
});

/** The service's 402 for `path`, without spending free quota (a malformed payment header is answered with it). */
async function requirement(path: string, init: RequestInit = {}): Promise<PaymentRequired> {
  const headers = new Headers(init.headers);
  headers.set('PAYMENT-SIGNATURE', 'not-base64!');
  const response = await fetch(`${paid.spot.url}${path}`, { ...init, headers });
  expect(response.status).toBe(402);
  return requirementOf(response);
}

/** A `PAYMENT-SIGNATURE` of buyer `index` for `required`, valid until `lifetimeS` seconds from now. */
async function authorize(index: number, required: PaymentRequired, lifetimeS: number) {
  const accepted = required.accepts[0]!;
  const { auth, signature } = await signAuthorization(paid.buyer(index), {
    to: accepted.payTo as Hex,
    value: BigInt(accepted.amount),
    validBefore: BigInt(Math.floor(Date.now() / 1000) + lifetimeS),
  });
  const authorization = {
    ...auth,
    value: auth.value.toString(),
    validAfter: auth.validAfter.toString(),
    validBefore: auth.validBefore.toString(),
  };
  const payload = {
    x402Version: 2,
    accepted,
    payload: { authorization, signature },
    ...(required.resource ? { resource: required.resource } : {}),
  };
  return { auth, header: Buffer.from(JSON.stringify(payload)).toString('base64') };
}

/** Everything public or durable that a call could have left behind. */
async function publicState(url: string) {
  await paid.spot.service.deps.ledger.flushFiles();
  const { journal, receipts } = dataPaths(paid.spot.dataDir);
  let journalLines = 0;
  for (const name of await readdir(journal)) {
    if (name.endsWith('.jsonl'))
      journalLines += (await readFile(`${journal}/${name}`, 'utf8')).split('\n').length;
  }
  const list = (await (await fetch(`${paid.spot.url}/v1/receipts?page_size=500`)).json()) as {
    total: number;
    receipts: Array<{ id: string; url: string | null }>;
  };
  const byUrl = await fetch(`${paid.spot.url}/v1/receipts/by-url?${new URLSearchParams({ url })}`);
  return {
    journalLines,
    files: (await readdir(receipts, { recursive: true })).length,
    listed: list.total,
    forUrl: list.receipts.filter((item) => item.url === url).map((item) => item.id),
    byUrl: byUrl.status,
    observations: (await paid.spot.service.deps.store.observations(normalizeUrl(url), 'GET')).length,
  };
}

/** The free checks the client at `ip` has used today, read from a free answer (it uses one more). */
async function freeUsed(ip: string): Promise<number> {
  const response = await fetchFrom(ip)(
    `${paid.spot.url}${CHECK}?${new URLSearchParams({ url: paid.world.sellers.urls['sdk-ok'] })}`,
  );
  return ((await response.json()) as { access: { free_used_today: number } }).access.free_used_today;
}

/** Asserts that a paid call that did not settle left nothing behind and moved nothing. */
async function expectNothingLeft(
  call: () => Promise<Response>,
  options: { index: number; url: string; ip: string; status: number },
) {
  const before = { state: await publicState(options.url), money: await paid.balances(options.index) };
  const response = await call();
  expect(response.status).toBe(options.status);
  const text = await response.text();
  expect(text).not.toMatch(/"(sc|ps)-[a-z2-7]{26}"/);
  expect(await publicState(options.url)).toEqual({ ...before.state, byUrl: 404, forUrl: [] });
  expect(await paid.balances(options.index)).toEqual(before.money);
  expect(await freeUsed(options.ip)).toBe(1);
  return text;
}

describe('a paid check whose settlement fails', () => {
  it('authorization expiring while the endpoint stalls: 402, no receipt, no observation, nothing moved', async () => {
    const url = `${target.origin}/stall`;
    const path = `${CHECK}?${new URLSearchParams({ url })}`;
    const { header } = await authorize(0, await requirement(path), 9);
    // The endpoint stalls while the authorization runs out (the wait is the test's subject).
    onProbe = () => new Promise((resolve) => setTimeout(resolve, 4_000));
    const ip = '198.18.40.1';
    await expectNothingLeft(
      () => fetchFrom(ip)(`${paid.spot.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } }),
      { index: 0, url, ip, status: 402 },
    );
  });

  it('authorization canceled while the check runs: 402, no receipt, no observation, nothing moved', async () => {
    const url = `${target.origin}/cancel-check`;
    const path = `${CHECK}?${new URLSearchParams({ url })}`;
    const { auth, header } = await authorize(1, await requirement(path), 300);
    onProbe = async () => {
      await paid.world.chain.publicClient.waitForTransactionReceipt({
        hash: await cancelAuthorization(paid.world.chain, paid.buyer(1), auth),
      });
    };
    const ip = '198.18.40.2';
    await expectNothingLeft(
      () => fetchFrom(ip)(`${paid.spot.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } }),
      { index: 1, url, ip, status: 402 },
    );
  });
});

describe('a paid payment-status call whose settlement fails', () => {
  it('authorization canceled while seller_url is read: 402, no ps- receipt, nothing moved', async () => {
    const url = `${target.origin}/cancel-status`;
    const body = JSON.stringify({
      from: paid.buyer(0).address,
      nonce: `0x${'42'.repeat(32)}`,
      seller_url: url,
    });
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    const { auth, header } = await authorize(2, await requirement(STATUS, init), 300);
    onProbe = async () => {
      await paid.world.chain.publicClient.waitForTransactionReceipt({
        hash: await cancelAuthorization(paid.world.chain, paid.buyer(2), auth),
      });
    };
    const ip = '198.18.40.3';
    await expectNothingLeft(
      () =>
        fetchFrom(ip)(`${paid.spot.url}${STATUS}`, {
          ...init,
          headers: { ...init.headers, 'PAYMENT-SIGNATURE': header },
        }),
      { index: 2, url, ip, status: 402 },
    );
  });
});

describe('an authorization too short for the check', () => {
  it('is refused with 402 before the check runs: the target sees no probe, nothing is settled', async () => {
    const url = `${target.origin}/too-short`;
    const path = `${CHECK}?${new URLSearchParams({ url })}`;
    // Verify passes (the SDK wants 6 s left); the probe budget plus the settlement margin is longer.
    const { header } = await authorize(3, await requirement(path), 20);
    const settles = paid.world.facilitator.calls.settle;
    const ip = '198.18.40.4';
    const text = await expectNothingLeft(
      () => fetchFrom(ip)(`${paid.spot.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } }),
      { index: 3, url, ip, status: 402 },
    );
    expect((JSON.parse(text) as { error: string }).error).toBe('authorization_expires_too_soon');
    expect(target.seen.filter((seen) => seen.url === '/too-short')).toEqual([]);
    expect(paid.world.facilitator.calls.settle).toBe(settles);
  });
});

describe('a facilitator that claims a settlement it did not make', () => {
  it('"hello" on eip155:1 for one unit: 502 settlement_unverified, nothing public, nothing moved', async () => {
    const url = `${target.origin}/lied-to`;
    const path = `${CHECK}?${new URLSearchParams({ url })}`;
    const { header } = await authorize(4, await requirement(path), 300);
    onProbe = async () => {};
    paid.world.facilitator.setMode('lie');
    const ip = '198.18.40.5';
    try {
      const text = await expectNothingLeft(
        () => fetchFrom(ip)(`${paid.spot.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } }),
        { index: 4, url, ip, status: 502 },
      );
      expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe('settlement_unverified');
    } finally {
      paid.world.facilitator.setMode('ok');
    }
    // The payment key is held: the same authorization is refused without reaching the facilitator again.
    const verifies = paid.world.facilitator.calls.verify;
    const replay = await fetch(`${paid.spot.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(requirementOf(replay).error).toBe('settlement_pending');
    expect(paid.world.facilitator.calls.verify).toBe(verifies);
  });
});
