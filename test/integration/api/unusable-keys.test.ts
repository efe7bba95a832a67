/**
 * An unusable key is a 401 `bad_key`, never a free answer: an `Authorization` header that is not exactly
 * `Bearer <token>` (scheme in any case, one space, one token, nothing after), and a live key anywhere but
 * `Authorization: Bearer` or `x-service-key`, on the check (and its dry run), the lookup, payment status, the
 * integrator's account and every MCP tool. A well-formed active key keeps working, `bearer` in lower case included
 * (RFC 9110: the scheme is case-insensitive).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServiceKey } from '../../../core/service-key.ts';
import { sourceEvidence, TX } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator } from '../../helpers/integrators.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

let spot: TestService;
let suspended = '';
let active = '';
const clients: Client[] = [];

beforeAll(async () => {
  const evidence = (name: string) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 });
  const chain = { read: async () => ({ sources: [evidence('rpc-1'), evidence('rpc-2')] }) };
  spot = await startTestService({}, { prober: fakeProber(), chain });
  const hosted = spot.service.deps.hosted;
  if (!hosted) throw new Error('hosted mode is not wired');
  [suspended = ''] = await createIntegrator(hosted, 'paused', '0');
  [active = ''] = await createIntegrator(hosted, 'running', '0');
  const at = new Date().toISOString();
  const target = parseServiceKey(suspended)?.id;
  await hosted.apply(JSON.stringify({ op: 'state', target, state: 'suspended', at }));
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await spot.stop();
});

/** The ways a key was sent that each got a free answer before. */
const unusable = (key: string): Array<Record<string, string>> => [
  { authorization: `Token ${key}` },
  { authorization: key },
  { authorization: `Bearer ${key}, Bearer x` },
  { authorization: `bearer ${key} trailing` },
  { authorization: `Bearer  ${key}` },
  { authorization: `Bearer ${key}` },
  { 'x-service-key': key },
  { 'x-api-key': key },
  { authorization: `Bearer ${EXEMPT_SECRET}`, 'x-service-key': key },
];

const CHECK = '/v1/products/endpoint-spot-check';
const PAYMENT_STATUS = '/v1/products/payment-status';
const seller = (n: number) => `https://seller.example/keys/${n}`;
let n = 0;
/** Every route that decides access, each with fresh parameters and a fresh address (quota stays available). */
const routes = (): Array<[string, string, RequestInit]> => {
  n++;
  return [
    ['check', `${CHECK}?url=${encodeURIComponent(seller(n))}`, {}],
    ['dry run', `${CHECK}?url=${encodeURIComponent(seller(n))}&mode=dry-run`, {}],
    [
      'check POST',
      CHECK,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: seller(n) }),
      },
    ],
    ['lookup', '/v1/lookup', {}],
    ['payment status', `${PAYMENT_STATUS}?tx_hash=${TX}`, {}],
    [
      'payment status POST',
      PAYMENT_STATUS,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tx_hash: TX }),
      },
    ],
    ['integrator account', '/v1/integrators/me', {}],
  ];
};

async function expectBadKey(res: Response, what: string): Promise<void> {
  const text = await res.text();
  expect(res.status, `${what}: ${text}`).toBe(401);
  expect(JSON.parse(text).error.code, what).toBe('bad_key');
  expect(text, what).not.toMatch(/"tier"/);
}

describe('over HTTP', () => {
  it.each([
    ['a suspended key', () => suspended],
    ['an active key', () => active],
  ])('%s sent any other way than Bearer or x-service-key is a 401 bad_key on every route', async (_, key) => {
    let ip = 0;
    for (const headers of unusable(key())) {
      const wellFormed =
        headers.authorization === `Bearer ${key()}` || (headers['x-service-key'] && !headers.authorization);
      if (key() === active && wellFormed) continue;
      for (const [name, path, init] of routes()) {
        const merged = { ...(init.headers as Record<string, string> | undefined), ...headers };
        const res = await appFetch(spot.service, path, {
          ...init,
          headers: merged,
          ip: `198.51.100.${++ip}`,
        });
        await expectBadKey(
          res,
          `${name} with ${JSON.stringify(Object.keys(headers))} ${headers.authorization ?? ''}`,
        );
      }
    }
  });

  it('any other Authorization scheme or shape is a 401 too, even without a key in it', async () => {
    for (const authorization of ['Basic dXNlcjpwdw==', 'Bearer', 'Bearer ', '', 'Bearer a b']) {
      const [, path] = routes()[0]!;
      await expectBadKey(
        await appFetch(spot.service, path, { headers: { authorization }, ip: '198.51.100.200' }),
        JSON.stringify(authorization),
      );
    }
  });

  it('an active key as Bearer (any case of the scheme) or x-service-key is served hosted', async () => {
    for (const headers of [
      { authorization: `Bearer ${active}` },
      { authorization: `bearer ${active}` },
      { authorization: `BEARER ${active}` },
      { 'x-service-key': active },
      { 'x-service-key': active, authorization: `Bearer ${active}` },
    ]) {
      const [, path] = routes()[0]!;
      const res = await appFetch(spot.service, path, { headers, ip: '198.51.100.201' });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(await res.json()).toMatchObject({ access: { tier: 'hosted' } });
    }
  });
});

describe('through MCP', () => {
  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'spotcheck-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', spot.url), {
      requestInit: { headers: { 'x-forwarded-for': '198.51.100.210', ...headers } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  it('a suspended key sent any way is a 401 bad_key from every tool that answers for a caller', async () => {
    for (const headers of unusable(suspended)) {
      const client = await connect(headers);
      n++;
      const calls: Array<[string, Record<string, unknown>]> = [
        ['check_endpoint', { url: seller(n) }],
        ['check_endpoint', { url: seller(n), mode: 'dry-run' }],
        ['lookup', {}],
        ['payment_status', { tx_hash: TX }],
      ];
      for (const [name, args] of calls) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        const what = `${name} with ${JSON.stringify(headers)}`;
        expect(result.isError, what).toBe(true);
        expect(result._meta?.['spotcheck/http-status'], what).toBe(401);
        expect(result.structuredContent, what).toBeUndefined();
        const text = (result.content[0] as { text: string }).text;
        expect(JSON.parse(text).error.code, what).toBe('bad_key');
        expect(text, what).not.toMatch(/"tier"/);
      }
    }
  });
});
