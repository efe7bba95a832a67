/**
 * Client identity behind TRUST_PROXY: the forwarded address is parsed and canonicalized, so
 * ports, brackets and other spellings are one client; anything unparseable falls back to the socket address; and
 * the header is honoured only from a peer in TRUSTED_PROXIES. Measured on the free check (5 per client a day).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../../api/config.ts';
import { LIMITS } from '../../../core/limits.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

let running: TestService[] = [];
async function start(env: Record<string, string> = {}) {
  const spot = await startTestService(env, { prober: fakeProber() }, { listen: false });
  running.push(spot);
  return spot;
}
afterEach(async () => {
  for (const spot of running) await spot.stop();
  running = [];
});

const FREE = LIMITS.freeChecksPerDay;
let n = 0;
/** Free checks of fresh URLs, one per `forwarded` value, from socket peer `peer`; the statuses in order. */
async function checks(spot: TestService, forwarded: string[], peer?: string): Promise<number[]> {
  const statuses: number[] = [];
  for (const ip of forwarded) {
    n += 1;
    const url = encodeURIComponent(`https://seller.example/id/${n}`);
    const res = await appFetch(spot.service, `/v1/products/endpoint-spot-check?url=${url}`, {
      ip,
      ...(peer ? { peer } : {}),
    });
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  return statuses;
}
const exactlyFree = (count: number) => [
  ...Array<number>(FREE).fill(200),
  ...Array<number>(count - FREE).fill(402),
];

describe('canonical forwarded address', () => {
  it('a port on the forwarded address makes no new client', async () => {
    const spot = await start();
    const forwarded = Array.from({ length: FREE + 3 }, (_, i) => `198.51.100.9:${1000 + i}`);
    expect(await checks(spot, forwarded)).toEqual(exactlyFree(forwarded.length));
  });

  it('brackets, case, zero groups and IPv4-mapped spellings are one client', async () => {
    const spot = await start();
    const v6 = [
      '2001:db8::1',
      '[2001:db8::1]:443',
      '2001:DB8:0:0::1',
      '2001:db8:0:0:0:0:0:1',
      '[2001:db8::0:1]',
    ];
    const v4 = [
      '198.51.100.10',
      '::ffff:198.51.100.10',
      '[::ffff:c633:640a]:80',
      '198.51.100.10:1',
      '::FFFF:198.51.100.10',
    ];
    expect(await checks(spot, [...v6, '2001:db8::01'])).toEqual(exactlyFree(v6.length + 1));
    expect(await checks(spot, [...v4, '198.51.100.10:2'])).toEqual(exactlyFree(v4.length + 1));
  });

  it('an unparseable forwarded entry counts as the socket address', async () => {
    const spot = await start();
    const junk = ['unknown', '_hidden', 'fe80::1%eth0', 'proxy.example', '198.51.100.300', '[::1', 'x:1'];
    expect(await checks(spot, junk, '127.0.0.5')).toEqual(exactlyFree(junk.length));
  });
});

describe('trusted proxies', () => {
  it('ignores X-Forwarded-For from a peer outside TRUSTED_PROXIES', async () => {
    const spot = await start();
    const rotating = Array.from({ length: FREE + 3 }, (_, i) => `203.0.113.${i + 1}`);
    expect(await checks(spot, rotating, '198.51.100.50')).toEqual(exactlyFree(rotating.length));
  });

  it('honours X-Forwarded-For from a configured proxy range, and only from it', async () => {
    const spot = await start({ TRUSTED_PROXIES: '10.20.0.0/16, 2001:db8:ffff::1' });
    const rotating = (k: number) => Array.from({ length: FREE + 1 }, (_, i) => `203.0.${k}.${i + 1}`);
    expect(await checks(spot, rotating(1), '10.20.3.4')).toEqual(Array(FREE + 1).fill(200));
    expect(await checks(spot, rotating(2), '2001:db8:ffff::1')).toEqual(Array(FREE + 1).fill(200));
    // Loopback is no longer trusted once the setting names other proxies.
    expect(await checks(spot, rotating(3), '127.0.0.1')).toEqual(exactlyFree(FREE + 1));
  });

  it('the peer address itself is canonical: an IPv4-mapped loopback peer is the loopback proxy', async () => {
    const spot = await start();
    const rotating = Array.from({ length: FREE + 1 }, (_, i) => `203.0.114.${i + 1}`);
    expect(await checks(spot, rotating, '::ffff:127.0.0.1')).toEqual(Array(FREE + 1).fill(200));
  });
});

describe('TRUSTED_PROXIES setting', () => {
  it('defaults to loopback', () => {
    const config = readConfig({});
    expect(config.trustedProxies.map((block) => `${block.family}/${block.prefix}`)).toEqual(['4/8', '6/128']);
  });

  it('stops the start-up on an entry that is not an address or CIDR', () => {
    expect(() => readConfig({ TRUSTED_PROXIES: '10.0.0.0/8, proxy.example' })).toThrow(
      /invalid TRUSTED_PROXIES/,
    );
  });
});

describe('on a real port', () => {
  async function listening(env: Record<string, string>) {
    const spot = await startTestService(env, { prober: fakeProber() });
    running.push(spot);
    return spot;
  }
  /** Free checks over TCP from loopback, each naming a new client in X-Forwarded-For. */
  async function overTcp(spot: TestService, count: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      n += 1;
      const url = encodeURIComponent(`https://seller.example/tcp/${n}`);
      const res = await fetch(`${spot.url}/v1/products/endpoint-spot-check?url=${url}`, {
        headers: { 'x-forwarded-for': `203.0.115.${i + 1}:${40000 + i}` },
      });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    return statuses;
  }

  it('the socket peer is the loopback proxy of the default TRUSTED_PROXIES: forwarded clients count', async () => {
    const spot = await listening({});
    expect(await overTcp(spot, FREE + 2)).toEqual(Array(FREE + 2).fill(200));
  });

  it('a socket peer outside TRUSTED_PROXIES is the client, whatever it forwards', async () => {
    const spot = await listening({ TRUSTED_PROXIES: '10.0.0.0/8' });
    expect(await overTcp(spot, FREE + 2)).toEqual(exactlyFree(FREE + 2));
  });
});
