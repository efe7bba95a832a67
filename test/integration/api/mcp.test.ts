/**
 * `POST /mcp` on a real loopback port, driven by the official MCP SDK client (`Client` +
 * `StreamableHTTPClientTransport`): the tools and their schemas, every tool called, the free quota shared with
 * the HTTP routes under the caller's own address, the x402 tool-result binding of a 402, service keys carried
 * from the MCP request, and 405 for GET and DELETE. The real journal, DuckDB, signing key and seller; fakes only
 * at the prober and chain-reader seams.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainReaderLike } from '../../../api/payment-status.ts';
import {
  CheckAnswerFreeSchema,
  CheckAnswerPaidSchema,
  PaymentRequiredSchema,
  PaymentStatusAnswerSchema,
} from '../../../core/answer-schemas.ts';
import { BASE_USDC } from '../../../core/networks.ts';
import { paymentTermsSha256 } from '../../../core/payment.ts';
import { REASONS } from '../../../core/reasons.ts';
import {
  buildAccept,
  buildPaymentRequired,
  buildV2Header,
  PAY_TO,
  RESOURCE_URL,
} from '../../fixtures/challenge.ts';
import { sourceEvidence } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator } from '../../helpers/integrators.ts';
import { EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

const chain: ChainReaderLike = {
  async read() {
    const one = (name: string) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 });
    return { sources: [one('rpc-1'), one('rpc-2')] };
  },
};

let spot: TestService;
const clients: Client[] = [];
beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber(), chain });
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await spot.stop();
});

/** An MCP client as the caller at `ip` (TRUST_PROXY is on in tests), with extra request headers. */
async function connect(ip: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'spotcheck-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', spot.url), {
    requestInit: { headers: { 'x-forwarded-for': ip, ...headers } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (result: CallToolResult) => JSON.parse((result.content[0] as { text: string }).text);
const seller = (n: number) => `https://seller.example/mcp/${n}`;
const httpCheck = (ip: string, n: number) =>
  fetch(`${spot.url}/v1/products/endpoint-spot-check?url=${encodeURIComponent(seller(n))}`, {
    headers: { 'x-forwarded-for': ip },
  });

describe('tools/list', () => {
  it('lists the ten tools, each with a description and object input and output schemas', async () => {
    const { tools } = await (await connect('198.51.100.1')).listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'check_endpoint',
      'payment_status',
      'lookup',
      'list_tasks',
      'get_receipt',
      'verify_receipt',
      'get_rules',
      'create_watch',
      'watch_events',
      'resume_watch',
    ]);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const check = tools.find((tool) => tool.name === 'check_endpoint');
    expect(check?.inputSchema.required).toEqual(['url']);
    expect(Object.keys(check?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['url', 'claimed_price', 'pay_to', 'network', 'mode', 'check_expiry', 'skew_s']),
    );
    expect(JSON.stringify(check?.outputSchema)).toContain('x402Version');
  });

  it('declares an output schema for every tool, and each free tool answers within its own', async () => {
    const client = await connect('198.51.100.9');
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe('object');
    const validator = new AjvJsonSchemaValidator();
    const held = async (name: string, args: Record<string, unknown> = {}) => {
      const schema = tools.find((tool) => tool.name === name)?.outputSchema;
      const result = await call(client, name, args);
      expect(result.isError, name).toBeFalsy();
      expect(validator.getValidator(schema as JsonSchemaType)(result.structuredContent), name).toMatchObject({
        valid: true,
      });
    };
    await held('get_rules');
    await held('list_tasks');
    await held('check_endpoint', { url: seller(30) });
  });
});

describe('every tool', () => {
  it('check_endpoint answers the free shape and names a receipt that get_receipt and verify_receipt read', async () => {
    const client = await connect('198.51.100.2');
    const checked = await call(client, 'check_endpoint', { url: seller(1), claimed_price: 0.01 });
    expect(checked.isError).toBeFalsy();
    const answer = v.parse(CheckAnswerFreeSchema, checked.structuredContent);
    expect(answer.access).toEqual({ tier: 'free', free_per_day: 5, free_used_today: 1 });
    expect(textOf(checked)).toEqual(checked.structuredContent);

    const byId = await call(client, 'get_receipt', { id: answer.receipt_id });
    expect(byId.structuredContent).toMatchObject({
      id: answer.receipt_id,
      type: 'check',
      verdict: answer.verdict,
    });
    // by-url shows a URL's public state: a check made with the caller's own expectation is not it.
    const plain = await call(client, 'check_endpoint', { url: seller(7) });
    const byUrl = await call(client, 'get_receipt', { url: seller(7) });
    expect(byUrl.structuredContent).toMatchObject({ id: plain.structuredContent?.receipt_id });

    const verified = await call(client, 'verify_receipt', { id: answer.receipt_id });
    expect(verified.structuredContent).toMatchObject({ ok: true, receipt_id: answer.receipt_id });
    const tampered = { ...byId.structuredContent, verdict: 'skip' };
    const refused = await call(client, 'verify_receipt', { receipt: tampered });
    expect(refused.structuredContent).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('payment_status, lookup, list_tasks and get_rules answer what their routes and core/ answer', async () => {
    const client = await connect('198.51.100.3');
    const status = await call(client, 'payment_status', {
      from: `0x${'11'.repeat(20)}`,
      nonce: `0x${'22'.repeat(32)}`,
      valid_before: String(1_800_000_000 + 60),
    });
    expect(v.parse(PaymentStatusAnswerSchema, status.structuredContent)).toMatchObject({
      status: 'pending',
      safe_to_resign: false,
      access: { tier: 'free', free_used_today: 1 },
    });

    const tasks = await call(client, 'list_tasks');
    const names = (tasks.structuredContent as { tasks: { name: string }[] }).tasks.map((task) => task.name);
    expect(names.length).toBeGreaterThan(0);
    const lookup = await call(client, 'lookup', { task: names[0], n: 3, limit: 2 });
    expect(lookup.structuredContent).toMatchObject({ results: [], facts_only: [], access: { tier: 'free' } });

    const rules = (await call(client, 'get_rules')).structuredContent as { reasons: { code: string }[] };
    expect(rules.reasons.map((reason) => reason.code)).toEqual([...REASONS]);
  });

  it('refuses bad arguments with the route error code and uses no free check', async () => {
    const client = await connect('198.51.100.4');
    const bad = await call(client, 'check_endpoint', { url: 'not-a-url' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad).error.code).toBe('bad_url');
    expect(bad._meta?.['spotcheck/http-status']).toBe(400);
    const good = await call(client, 'check_endpoint', { url: seller(2) });
    expect(good.structuredContent).toMatchObject({ access: { free_used_today: 1 } });
    expect(textOf(await call(client, 'get_receipt', {})).error.code).toBe('missing_id_or_url');
    expect(textOf(await call(client, 'lookup', { task: ['a', 'b'] })).error.code).toBe('bad_arguments');
  });
});

describe('metering (the route is the meter)', () => {
  it('shares the 5 free checks with HTTP for one address, then answers the x402 tool-result binding', async () => {
    const ip = '198.51.100.5';
    const client = await connect(ip);
    for (const n of [1, 2, 3]) {
      const result = await call(client, 'check_endpoint', { url: seller(10 + n) });
      expect(result.structuredContent).toMatchObject({ access: { free_used_today: n } });
    }
    for (const n of [4, 5]) expect((await httpCheck(ip, 10 + n)).status).toBe(200);

    const paywalled = await call(client, 'check_endpoint', { url: seller(16) });
    expect(paywalled.isError).toBe(true);
    const required = v.parse(PaymentRequiredSchema, paywalled.structuredContent);
    expect(required.accepts[0]).toMatchObject({ scheme: 'exact', network: 'eip155:8453', amount: '20000' });
    expect(JSON.parse((paywalled.content[0] as { text: string }).text)).toEqual(paywalled.structuredContent);
    expect((await httpCheck(ip, 17)).status).toBe(402);

    // Another address has its own quota, over MCP as over HTTP.
    const other = await call(await connect('198.51.100.6'), 'check_endpoint', { url: seller(18) });
    expect(other.structuredContent).toMatchObject({ access: { free_used_today: 1 } });
  });

  it('carries a service key from the MCP request: an exempt key gets the full answer, a bad key a 401', async () => {
    const exempt = await connect('198.51.100.7', { authorization: `Bearer ${EXEMPT_SECRET}` });
    const full = await call(exempt, 'check_endpoint', { url: seller(20) });
    expect(v.parse(CheckAnswerPaidSchema, full.structuredContent).access).toEqual({ tier: 'exempt' });

    const wrong = await connect('198.51.100.8', { 'x-service-key': 'not-a-key' });
    const refused = await call(wrong, 'check_endpoint', { url: seller(21) });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['spotcheck/http-status']).toBe(401);
  });

  it('with an integrator key on the MCP request, every tool answers: hosted where the route is hosted', async () => {
    const hosted = spot.service.deps.hosted;
    if (!hosted) throw new Error('hosted mode is not wired');
    const [key = ''] = await createIntegrator(hosted, 'mcptools', '0');
    const client = await connect('198.51.100.9', {
      authorization: `Bearer ${key}`,
      'x-service-end-user': 'agent-9',
    });
    const checked = await call(client, 'check_endpoint', { url: seller(22) });
    expect(checked.structuredContent).toMatchObject({ access: { tier: 'hosted' }, access_tier: 'hosted' });
    // Lookups have no hosted mode (docs/api.md §5.1, §5.4: keys go on the check and payment status): the tool answers as
    // it does for anyone, on the caller's free quota, instead of refusing the integrator's key.
    const tasks = (await call(client, 'list_tasks')).structuredContent as { tasks: { name: string }[] };
    const found = await call(client, 'lookup', { task: tasks.tasks[0]?.name });
    expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
    expect(found.structuredContent).toMatchObject({ access: { tier: 'free', free_used_today: 1 } });
    expect((await call(client, 'get_rules')).isError).toBeFalsy();
    expect(await hosted.meter.calls('mcptools', new Date().toISOString().slice(0, 7))).toBe(1);
  });
});

describe('watches', () => {
  it('create_watch asks a caller without a key to pay, and bad input is the route code with no 402', async () => {
    const client = await connect('198.51.100.31');
    const unpaid = await call(client, 'create_watch', { url: 'http://127.0.0.1/mcp-watched/1' });
    expect(unpaid.isError).toBe(true);
    expect(v.parse(PaymentRequiredSchema, unpaid.structuredContent).accepts[0]?.amount).toBe('1000000');
    const refused = await call(client, 'create_watch', {
      url: 'http://127.0.0.1/mcp-watched/1',
      webhook_url: 'http://10.0.0.1/hook',
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatchObject({ error: { code: 'webhook_url_refused' } });
  });

  it('create_watch with a key makes a watch whose events watch_events reads with its token, within the schemas', async () => {
    const client = await connect('198.51.100.32', { 'x-service-key': EXEMPT_SECRET });
    const { tools } = await client.listTools();
    const validator = new AjvJsonSchemaValidator();
    const holds = (name: string, result: CallToolResult) =>
      validator.getValidator(tools.find((tool) => tool.name === name)?.outputSchema as JsonSchemaType)(
        result.structuredContent,
      ).valid;
    const made = await call(client, 'create_watch', { url: 'http://127.0.0.1/mcp-watched/2', method: 'GET' });
    expect(made.isError, JSON.stringify(made.content)).toBeFalsy();
    expect(holds('create_watch', made)).toBe(true);
    const watch = made.structuredContent as { id: string; token: string; access: { tier: string } };
    expect(watch.access.tier).toBe('exempt');
    const events = await call(client, 'watch_events', { watch_id: watch.id, token: watch.token, limit: 5 });
    expect(events.isError, JSON.stringify(events.content)).toBeFalsy();
    expect(holds('watch_events', events)).toBe(true);
    expect(events.structuredContent).toMatchObject({ watch_id: watch.id, events: [], next: null });
    // Without the right token: the route's one 404, whoever asks.
    const stranger = await call(client, 'watch_events', { watch_id: watch.id, token: 'wt_wrong' });
    expect(stranger.isError).toBe(true);
    expect(textOf(stranger)).toMatchObject({ error: { code: 'watch_not_found' } });
    expect((await call(client, 'watch_events', { watch_id: 'nope', token: 'x' })).isError).toBe(true);
    // resume_watch: an active watch is left as it is; a stranger gets the one 404.
    const resumed = await call(client, 'resume_watch', { watch_id: watch.id, token: watch.token });
    expect(resumed.isError, JSON.stringify(resumed.content)).toBeFalsy();
    expect(holds('resume_watch', resumed)).toBe(true);
    expect(resumed.structuredContent).toMatchObject({
      id: watch.id,
      status: 'active',
      deliveries_requeued: 0,
    });
    const notMine = await call(client, 'resume_watch', { watch_id: watch.id, token: 'wt_wrong' });
    expect(textOf(notMine)).toMatchObject({ error: { code: 'watch_not_found' } });
    expect(tools.find((tool) => tool.name === 'resume_watch')?.annotations?.readOnlyHint).toBe(false);
  });
});

describe('transport', () => {
  it('answers a JSON-RPC error with a fixed text per code, never an exception of the service or its SDK', async () => {
    const rpc = async (body: unknown) => {
      const res = await fetch(`${spot.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      });
      return (await res.text()).trim();
    };
    // A tools/call whose params the SDK's schema refuses: it used to answer -32603 with the schema library's
    // exception text (a JSON list of issues and paths).
    const refused = JSON.parse(
      await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5 } }),
    ) as { error: { code: number; message: string; data?: { code: string } } };
    expect(refused.error).toEqual({
      code: -32603,
      message: 'Internal error',
      data: { code: 'internal_error' },
    });
    const unknown = JSON.parse(await rpc({ jsonrpc: '2.0', id: 2, method: 'resources/list' })) as {
      error: { code: number; message: string };
    };
    expect(unknown.error).toMatchObject({ code: -32601, message: 'Method not found' });
  });

  it('answers GET and DELETE with 405 (stateless: no event stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${spot.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    }
  });

  it('answers a JSON-RPC parse error for a body that is not JSON, and 413 over 64 KiB', async () => {
    const post = (body: string) =>
      fetch(`${spot.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body,
      });
    const broken = await post('{not json');
    expect(broken.status).toBe(400);
    const text = await broken.text();
    expect((JSON.parse(text) as { error: { code: number } }).error.code).toBe(-32700);
    // The parser's exception text stays in the service (the SDK would send it as `data`).
    expect(text).not.toMatch(/SyntaxError|position|data/);
    expect((await post(`"${'a'.repeat(70_000)}"`)).status).toBe(413);
  });
});

describe('check_endpoint on a challenge the agent received', () => {
  const url = RESOURCE_URL;
  const hash = paymentTermsSha256({
    network: 'eip155:8453',
    asset: BASE_USDC,
    amountAtomic: '10000',
    payTo: PAY_TO,
  });

  it('takes payment_required and selected_requirement, and answers within its output schema', async () => {
    const client = await connect('198.51.100.40');
    const { tools } = await client.listTools();
    const tool = tools.find((each) => each.name === 'check_endpoint');
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['payment_required', 'selected_requirement']),
    );
    const validate = new AjvJsonSchemaValidator().getValidator(tool?.outputSchema as JsonSchemaType);
    const honest = await call(client, 'check_endpoint', {
      url,
      payment_required: buildPaymentRequired(),
      selected_requirement: buildAccept(),
    });
    expect(honest.isError).toBeFalsy();
    expect(honest.structuredContent).toMatchObject({
      verdict: 'pay',
      payment_terms_sha256: hash,
      sent_challenge: { selected_by: 'caller', selected_terms_sha256: hash },
    });
    expect(validate(honest.structuredContent)).toMatchObject({ valid: true });
    const header = await call(client, 'check_endpoint', { url, payment_required: buildV2Header() });
    expect(header.structuredContent).toMatchObject({ verdict: 'pay', payment_terms_sha256: hash });
    const switched = await call(client, 'check_endpoint', {
      url,
      payment_required: buildPaymentRequired({ accepts: [buildAccept({ payTo: `0x${'66'.repeat(20)}` })] }),
    });
    expect(switched.structuredContent).toMatchObject({
      verdict: 'skip',
      reason_code: 'challenge_mismatch',
      payment_terms_sha256: null,
    });
  });

  it('refuses a challenge for another resource with the route code, using no free check', async () => {
    const client = await connect('198.51.100.41');
    const foreign = await call(client, 'check_endpoint', {
      url,
      payment_required: buildPaymentRequired({ resource: { url: 'https://other.example/x' } }),
    });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign).error.code).toBe('payment_required_resource_mismatch');
    expect(foreign._meta?.['spotcheck/http-status']).toBe(400);
    const good = await call(client, 'check_endpoint', { url: seller(40) });
    expect(good.structuredContent).toMatchObject({ access: { free_used_today: 1 } });
  });
});
