/**
 * Every metered route's access policy (`api/access-policies.ts`, run by `answerMetered`) from one table: each kind
 * of caller (none, free over quota, a valid or a refused payment, an exempt key, an active, suspended or
 * over-credit integrator key, a malformed key) with each kind of input, through `app.fetch` of the real service
 * (journal, quota, hosted mode, seller), with fakes only at the prober, chain-reader and facilitator seams, and the
 * free quota and hosted meter watched at their ports. Each row states the status, the error code or the tier, the
 * unit taken (none is ever given back in the table) and whether a payment was settled, so the orders that matter
 * are held: a 401 before anything, a 400 before any unit (free, dry run, hosted) is even reserved, the 402 before
 * the 400 on the paid lookup, a paid call's 400 after the payment is verified and before anything is settled, the
 * bare payment-status 402.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, SettleResponse, SupportedKind } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACCESS_POLICIES, type MeteredRouteName } from '../../../api/access-policies.ts';
import { API_VERSION, createApp } from '../../../api/app.ts';
import type { AppDeps } from '../../../api/deps.ts';
import type { Hosted } from '../../../api/hosted.ts';
import { openApiDocument } from '../../../api/openapi.ts';
import { OPERATIONS } from '../../../api/openapi-operations.ts';
import type { ChainReaderLike } from '../../../api/payment-status.ts';
import { TASK_NAMES } from '../../../api/routes/tasks.ts';
import { BASE } from '../../../core/networks.ts';
import { parseServiceKey } from '../../../core/service-key.ts';
import type { MeterPort } from '../../../io/hosted-meter/port.ts';
import type { QuotaPort } from '../../../io/quota/port.ts';
import { sourceEvidence, TX, unreachableSource } from '../../fixtures/payment.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator } from '../../helpers/integrators.ts';
import { openApiChecker } from '../../helpers/openapi.ts';
import { EXEMPT_SECRET, fromPeer, startTestService, type TestService } from '../../helpers/service.ts';

const GOOD = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const REFUSED = privateKeyToAccount(`0x${'22'.repeat(32)}`);

/** A facilitator that verifies every payment but REFUSED's, and settles what it verified. */
function fakeFacilitator() {
  const payerOf = (payload: PaymentPayload) =>
    String((payload.payload as { authorization?: { from?: string } }).authorization?.from ?? '');
  return {
    verify: vi.fn(async (payload: PaymentPayload) => {
      const payer = payerOf(payload);
      return payer.toLowerCase() === REFUSED.address.toLowerCase()
        ? { isValid: false, invalidReason: 'insufficient_funds', payer }
        : { isValid: true, payer };
    }),
    settle: vi.fn(
      async (payload: PaymentPayload) =>
        ({ success: true, transaction: TX, network: BASE, payer: payerOf(payload) }) as SettleResponse,
    ),
    getSupported: vi.fn(async () => ({
      kinds: [{ x402Version: 2, scheme: 'exact', network: BASE } as SupportedKind],
      extensions: [],
      signers: {},
    })),
  } satisfies FacilitatorClient;
}

const answering: ChainReaderLike = {
  read: async () => ({
    sources: ['rpc-1', 'rpc-2'].map((name) => sourceEvidence({ name, head: 500, headTime: 1_800_000_000 })),
  }),
};
const silent: ChainReaderLike = {
  read: async () => ({ sources: [unreachableSource('rpc-1', 'down'), unreachableSource('rpc-2', 'down')] }),
};

let spot: TestService;
let facilitator: ReturnType<typeof fakeFacilitator>;
let active = '';
let suspended = '';
beforeAll(async () => {
  facilitator = fakeFacilitator();
  spot = await startTestService(
    {},
    { prober: fakeProber(), chain: answering, facilitator },
    { listen: false },
  );
  const hosted = hostedOf(spot.service.deps);
  [active = ''] = await createIntegrator(hosted, 'meteractive', '0');
  [suspended = ''] = await createIntegrator(hosted, 'meterpaused', '0');
  const target = parseServiceKey(suspended)?.id;
  await hosted.apply(
    JSON.stringify({ op: 'state', target, state: 'suspended', at: new Date().toISOString() }),
  );
});
afterAll(async () => {
  await spot?.stop();
});

function hostedOf(deps: AppDeps): Hosted {
  if (!deps.hosted) throw new Error('hosted mode is not wired');
  return deps.hosted;
}

type Caller =
  | 'none'
  | 'free over quota'
  | 'paid valid'
  | 'paid refused'
  | 'exempt'
  | 'hosted active'
  | 'hosted suspended'
  | 'hosted over credit'
  | 'malformed key';
const CALLERS: Caller[] = [
  'none',
  'free over quota',
  'paid valid',
  'paid refused',
  'exempt',
  'hosted active',
  'hosted suspended',
  'hosted over credit',
  'malformed key',
];

/** A unit kept by the answer: a free use of a bucket, a dry run, or a hosted use. */
type Unit = 'check' | 'lookup' | 'payment_status' | 'dry_run' | 'hosted';
type Outcome = {
  status: number;
  code?: string;
  tier?: 'free' | 'paid' | 'exempt' | 'hosted';
  unit?: Unit;
  settled?: true;
  header?: [string, string];
};
const ok = (tier: NonNullable<Outcome['tier']>, unit?: Unit): Outcome => ({
  status: 200,
  tier,
  ...(unit ? { unit } : {}),
  ...(tier === 'paid' ? { settled: true } : {}),
});
const bad = (code: string): Outcome => ({ status: 400, code });
const KEY_401: Outcome = { status: 401, code: 'bad_key' };
const PAY_402: Outcome = { status: 402 };
const CREDIT_402: Outcome = { status: 402, header: ['x-service-hosted', 'credit_limit'] };
const DRY_RUN_429: Outcome = { status: 429, code: 'dry_run_limit' };
/** A resource made (a watch): 201, with the tier of `ok`. */
const made = (tier: NonNullable<Outcome['tier']>, unit?: Unit): Outcome => ({
  ...ok(tier, unit),
  status: 201,
});

type Route = {
  policy: MeteredRouteName;
  path: string;
  /** POST routes take their inputs as JSON bodies; the others are GET with a query. */
  method?: 'POST';
  /** The inputs of the row, by name: each a query string (a JSON body for a POST route). */
  inputs: Record<string, string>;
  /** Each caller's outcome for each input, in the order of `inputs`. */
  table: Record<Caller, Outcome[]>;
};

let n = 0;
const seller = () => `url=${encodeURIComponent(`https://seller.example/policies/${++n}`)}`;
/** A watched endpoint on loopback (a watch's URL passes the SSRF gate, DNS included, when it is made). */
const watchedUrl = () => `"http://127.0.0.1/policies/${++n}"`;
const TASK = TASK_NAMES[0] ?? 'fx-rate';

const ROUTES: Route[] = [
  {
    policy: 'check',
    path: '/v1/products/endpoint-spot-check',
    inputs: {
      valid: 'seller',
      invalid: 'url=ftp%3A%2F%2Fseller.example%2Fx',
      'dry run': 'seller&mode=dry-run',
      'unreadable challenge': 'seller&payment_required=not-base64',
    },
    table: {
      none: [ok('free', 'check'), bad('bad_url'), ok('free', 'dry_run'), bad('payment_required_invalid')],
      'free over quota': [PAY_402, bad('bad_url'), DRY_RUN_429, bad('payment_required_invalid')],
      // A payment sent with a dry run is never taken: the dry run is answered free.
      'paid valid': [ok('paid'), bad('bad_url'), ok('free', 'dry_run'), bad('payment_required_invalid')],
      'paid refused': [PAY_402, PAY_402, ok('free', 'dry_run'), PAY_402],
      exempt: [ok('exempt'), bad('bad_url'), ok('exempt'), bad('payment_required_invalid')],
      'hosted active': [
        ok('hosted', 'hosted'),
        bad('bad_url'),
        ok('hosted'),
        bad('payment_required_invalid'),
      ],
      'hosted suspended': [KEY_401, KEY_401, KEY_401, KEY_401],
      // A hosted dry run is never billed, so the credit limit does not stop it.
      'hosted over credit': [CREDIT_402, bad('bad_url'), ok('hosted'), bad('payment_required_invalid')],
      'malformed key': [KEY_401, KEY_401, KEY_401, KEY_401],
    },
  },
  {
    policy: 'lookup',
    path: '/v1/lookup',
    inputs: { valid: `task=${TASK}`, invalid: 'n=0' },
    table: {
      none: [ok('free', 'lookup'), bad('bad_n')],
      'free over quota': [PAY_402, bad('bad_n')],
      'paid valid': [ok('paid'), bad('bad_n')],
      'paid refused': [PAY_402, PAY_402],
      exempt: [ok('exempt'), bad('bad_n')],
      // Lookups take no integrator key.
      'hosted active': [KEY_401, KEY_401],
      'hosted suspended': [KEY_401, KEY_401],
      'hosted over credit': [KEY_401, KEY_401],
      'malformed key': [KEY_401, KEY_401],
    },
  },
  {
    policy: 'lookupPaid',
    path: '/v1/lookup/paid',
    inputs: { valid: `task=${TASK}`, invalid: 'n=0', 'no reference': '' },
    // Always paid, whoever asks: the 402 comes before the input is read.
    table: {
      none: [PAY_402, PAY_402, PAY_402],
      'free over quota': [PAY_402, PAY_402, PAY_402],
      'paid valid': [ok('paid'), bad('bad_n'), bad('missing_task_or_endpoint')],
      'paid refused': [PAY_402, PAY_402, PAY_402],
      exempt: [PAY_402, PAY_402, PAY_402],
      'hosted active': [PAY_402, PAY_402, PAY_402],
      'hosted suspended': [PAY_402, PAY_402, PAY_402],
      'hosted over credit': [PAY_402, PAY_402, PAY_402],
      'malformed key': [PAY_402, PAY_402, PAY_402],
    },
  },
  {
    policy: 'paymentStatus',
    path: '/v1/products/payment-status',
    inputs: { valid: `tx_hash=${TX}`, invalid: 'tx_hash=0x12', bare: '' },
    table: {
      none: [ok('free', 'payment_status'), bad('bad_tx_hash'), PAY_402],
      'free over quota': [PAY_402, bad('bad_tx_hash'), PAY_402],
      'paid valid': [ok('paid'), bad('bad_tx_hash'), bad('missing_reference')],
      'paid refused': [PAY_402, PAY_402, PAY_402],
      // Only a free caller's bare request is the way to ask for the price.
      exempt: [ok('exempt'), bad('bad_tx_hash'), bad('missing_reference')],
      'hosted active': [ok('hosted', 'hosted'), bad('bad_tx_hash'), bad('missing_reference')],
      'hosted suspended': [KEY_401, KEY_401, KEY_401],
      'hosted over credit': [CREDIT_402, bad('bad_tx_hash'), bad('missing_reference')],
      'malformed key': [KEY_401, KEY_401, KEY_401],
    },
  },
  {
    policy: 'setupPack',
    path: '/v1/products/overnight-cos-pack',
    inputs: { none: '' },
    table: {
      none: [PAY_402],
      'free over quota': [PAY_402],
      'paid valid': [ok('paid')],
      'paid refused': [PAY_402],
      exempt: [PAY_402],
      'hosted active': [PAY_402],
      'hosted suspended': [PAY_402],
      'hosted over credit': [PAY_402],
      'malformed key': [PAY_402],
    },
  },
  {
    policy: 'watch',
    path: '/v1/watches',
    method: 'POST',
    inputs: { valid: '{"url":seller}', invalid: '{"url":"ftp://shop.example/x"}' },
    // Bad input is a 400 before any 402 (and before a payment is even verified); a bad key a 401 before that.
    table: {
      none: [PAY_402, bad('bad_url')],
      'free over quota': [PAY_402, bad('bad_url')],
      'paid valid': [made('paid'), bad('bad_url')],
      'paid refused': [PAY_402, bad('bad_url')],
      exempt: [made('exempt'), bad('bad_url')],
      // A hosted watch is billed per watch-month on the invoice, not as a use: no use counted, no credit limit.
      'hosted active': [made('hosted'), bad('bad_url')],
      'hosted suspended': [KEY_401, KEY_401],
      'hosted over credit': [made('hosted'), bad('bad_url')],
      'malformed key': [KEY_401, KEY_401],
    },
  },
];

/** The quota and hosted meter of one request, watched: units reserved and units given back, by bucket. */
function watched(deps: AppDeps, caller: Caller) {
  const taken: string[] = [];
  const released: string[] = [];
  const quota: QuotaPort = {
    async reserve(keys) {
      if (caller === 'free over quota') return { ok: false, exhausted: keys[0]!, used: keys[0]!.limit };
      const result = await deps.gate.quota.reserve(keys);
      if (!result.ok) return result;
      const bucket = keys[0]!.bucket === 'dry_run_ip' ? 'dry_run' : keys[0]!.bucket;
      taken.push(bucket);
      const { release } = result.reservation;
      return {
        ok: true,
        reservation: {
          ...result.reservation,
          release: () => {
            released.push(bucket);
            return release();
          },
        },
      };
    },
  };
  const hosted = hostedOf(deps);
  const meter: MeterPort = {
    ...hosted.meter,
    async reserve(integrator, limit, endUser) {
      if (caller === 'hosted over credit') {
        return { ok: false, reason: 'credit_limit', dueAtomic: 20_000n, creditLimitAtomic: 0n };
      }
      const result = await hosted.meter.reserve(integrator, limit, endUser);
      if (!result.ok) return result;
      taken.push('hosted');
      const { release } = result.use;
      return {
        ok: true,
        use: {
          ...result.use,
          release: () => {
            released.push('hosted');
            return release();
          },
        },
      };
    },
  };
  const app = createApp({
    ...deps,
    gate: { ...deps.gate, quota },
    hosted: { ...hosted, meter },
  });
  return { app, taken, released };
}

const published = openApiChecker(openApiDocument('http://spotcheck.test', API_VERSION));
let ip = 0;

/**
 * GET `path` (POST `body` as JSON when given) on `app` as a fresh client (its own /24, so no ceiling is near), held
 * to `/openapi.json`.
 */
async function get(
  app: ReturnType<typeof createApp>,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
) {
  ip++;
  const method = body === undefined ? 'GET' : 'POST';
  const request = fromPeer(
    new Request(`http://spotcheck.test${path}`, {
      method,
      headers: {
        'x-forwarded-for': `10.${(ip >> 8) & 255}.${ip & 255}.7`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body }),
    }),
  );
  const response = await app.fetch(request);
  const template = published.templateOf(method, new URL(request.url).pathname);
  if (template !== null) await published.check(method, template, response);
  return response;
}

/** A `PAYMENT-SIGNATURE` from `buyer` for the offer of `path` (its 402 read from an app whose free tier is spent). */
async function payment(path: string, buyer: typeof GOOD): Promise<string> {
  const { app } = watched(spot.service.deps, 'free over quota');
  const unpaid = path.includes('watches')
    ? await get(app, path, {}, `{"url":${watchedUrl()}}`)
    : await get(app, path.includes('payment-status') ? `${path}?tx_hash=${TX}` : `${path}?${seller()}`);
  expect(unpaid.status, `402 of ${path}`).toBe(402);
  const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? '');
  // The SDK client caps a payment at USD 1 by default; the setup pack costs USD 9.
  const client = x402Client.fromConfig({
    schemes: [{ network: BASE, client: new ExactEvmScheme(buyer) }],
    spendControls: { maxAmountPerPayment: '$9' },
  });
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

async function headersOf(caller: Caller, path: string): Promise<Record<string, string>> {
  switch (caller) {
    case 'paid valid':
      return { 'payment-signature': await payment(path, GOOD) };
    case 'paid refused':
      return { 'payment-signature': await payment(path, REFUSED) };
    case 'exempt':
      return { 'x-service-key': EXEMPT_SECRET };
    case 'hosted active':
    case 'hosted over credit':
      return { authorization: `Bearer ${active}` };
    case 'hosted suspended':
      return { authorization: `Bearer ${suspended}` };
    case 'malformed key':
      return { authorization: 'Token abc' };
    default:
      return {};
  }
}

const rows = ROUTES.flatMap((route) =>
  CALLERS.flatMap((caller) =>
    Object.entries(route.inputs).map(([input, query], index) => {
      const expected = route.table[caller][index];
      if (!expected) throw new Error(`${route.policy}: no outcome for ${caller} × ${input}`);
      return { route, caller, input, query, expected };
    }),
  ),
);

describe('every metered route answers each caller and input as its policy says', () => {
  it('covers every policy of api/access-policies.ts', () => {
    expect(ROUTES.map((route) => route.policy).sort()).toEqual(Object.keys(ACCESS_POLICIES).sort());
  });

  it('publishes in /openapi.json what each policy says: its offer, its free tier, the keys it takes', () => {
    for (const route of ROUTES) {
      const policy = ACCESS_POLICIES[route.policy];
      const operations = OPERATIONS.filter((operation) => operation.path === route.path);
      expect(operations.length, route.path).toBeGreaterThan(0);
      for (const operation of operations) {
        expect(operation.offer, route.path).toBe(policy.offer);
        expect(operation.freeQuota === true, route.path).toBe(policy.free !== null);
        expect(operation.keys === 'optional', route.path).toBe(policy.keys === 'exempt-and-integrator');
      }
    }
  });

  it.each(rows.map((row) => [row.route.path, row.caller, row.input, row] as const))(
    '%s, %s, %s input',
    async (_path, caller, _input, { route, query, expected }) => {
      const { app, taken, released } = watched(spot.service.deps, caller);
      const headers = await headersOf(caller, route.path);
      const settledBefore = facilitator.settle.mock.calls.length;
      const response =
        route.method === 'POST'
          ? await get(app, route.path, headers, query.replace('seller', watchedUrl()))
          : await get(
              app,
              `${route.path}${query === '' ? '' : `?${query.replace('seller', seller())}`}`,
              headers,
            );
      const body = (await response.json()) as {
        error?: { code: string };
        access?: { tier: NonNullable<Outcome['tier']> };
        access_tier?: string;
      };
      const header = expected.header?.[0];
      const seen: Outcome = {
        status: response.status,
        ...(body.error ? { code: body.error.code } : {}),
        ...(body.access ? { tier: body.access.tier } : {}),
        ...(taken[0] ? { unit: taken[0] as Unit } : {}),
        ...(facilitator.settle.mock.calls.length > settledBefore ? { settled: true as const } : {}),
        ...(header ? { header: [header, response.headers.get(header) ?? ''] as [string, string] } : {}),
      };
      expect(seen, JSON.stringify(body).slice(0, 300)).toEqual(expected);
      // Not even reserved for a moment: a refused call never holds a unit another call could have had.
      expect(taken.length, 'at most one unit per call').toBeLessThanOrEqual(1);
      expect(released, 'no unit given back').toEqual([]);
      if (expected.tier === 'hosted') expect(body.access_tier).toBe('hosted');
    },
  );
});

describe('payment status without a chain to read', () => {
  const withChain = (chain: ChainReaderLike | null, caller: Caller) => {
    const watch = watched({ ...spot.service.deps, chain }, caller);
    return { ...watch, app: watch.app };
  };

  it('answers 503 before any unit when no source is configured, and a 400 before that', async () => {
    for (const caller of ['none', 'hosted active', 'exempt'] as const) {
      const { app, taken } = withChain(null, caller);
      const headers = await headersOf(caller, '/v1/products/payment-status');
      const unready = await get(app, `/v1/products/payment-status?tx_hash=${TX}`, headers);
      expect(unready.status, caller).toBe(503);
      expect(((await unready.json()) as { error: { code: string } }).error.code).toBe('chain_unavailable');
      const invalid = await get(app, '/v1/products/payment-status?tx_hash=0x12', headers);
      expect(invalid.status, caller).toBe(400);
      await invalid.body?.cancel();
      expect(taken, caller).toEqual([]);
    }
  });

  it('gives the unit back when no configured source answered', async () => {
    for (const [caller, unit] of [
      ['none', 'payment_status'],
      ['hosted active', 'hosted'],
    ] as const) {
      const { app, taken, released } = withChain(silent, caller);
      const headers = await headersOf(caller, '/v1/products/payment-status');
      const res = await get(app, `/v1/products/payment-status?tx_hash=${TX}`, headers);
      expect(res.status, caller).toBe(503);
      await res.body?.cancel();
      expect(taken, caller).toEqual([unit]);
      expect(released, caller).toEqual([unit]);
    }
  });
});
