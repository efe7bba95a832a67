/**
 * Fakes at the guard's seams: an x402 client that only keeps the hooks it is given (the real `createPaymentPayload`
 * order is replayed by `pay`), and a Spotcheck reached through a scripted `fetch`.
 */
import type { CreationContext, GuardableClient, ResponseContext } from '../src/guard.ts';

export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
export const SELLER = 'http://seller.test/weather';
export const WALLET = '0x1111111111111111111111111111111111111111';

/** A v2 requirement as a seller would offer it. */
export function requirement(overrides: Record<string, unknown> = {}) {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    asset: BASE_USDC,
    amount: '10000',
    payTo: WALLET,
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2' },
    ...overrides,
  };
}

/** A v2 challenge offering `accepts` for `url`. */
export function challenge(accepts: object[] = [requirement()], url = SELLER) {
  return { x402Version: 2, resource: { url, description: '', mimeType: 'application/json' }, accepts };
}

type Before = (c: CreationContext) => Promise<undefined | { abort: true; reason: string }>;
type After = (c: CreationContext & { paymentPayload: object }) => Promise<void>;
type OnResponse = (c: ResponseContext) => Promise<undefined | { recovered: true }>;

/** A client that keeps its hooks and runs them as `x402Client.createPaymentPayload` does. */
export function fakeClient() {
  const before: Before[] = [];
  const after: After[] = [];
  const responses: OnResponse[] = [];
  let signed = 0;
  const client: GuardableClient = {
    onBeforePaymentCreation: (hook) => before.push(hook),
    onAfterPaymentCreation: (hook) => after.push(hook),
    onPaymentResponse: (hook) => responses.push(hook),
  };
  return {
    client,
    get signed() {
      return signed;
    },
    /** Creates a payment for `paymentRequired` (its first requirement): throws when a hook aborts, as the SDK does. */
    async pay(paymentRequired: { accepts: object[] } = challenge()): Promise<object> {
      const selectedRequirements = paymentRequired.accepts[0] as object;
      const context = { paymentRequired, selectedRequirements };
      for (const hook of before) {
        const result = await hook(context);
        if (result?.abort) throw new Error(`Payment creation aborted: ${result.reason}`);
      }
      signed += 1;
      const paymentPayload = {
        x402Version: 2,
        payload: { authorization: { nonce: `0x${String(signed).padStart(64, '0')}` } },
        accepted: selectedRequirements,
        resource: (paymentRequired as { resource?: unknown }).resource,
      };
      for (const hook of after) await hook({ ...context, paymentPayload });
      return paymentPayload;
    },
    /** Creates a payment and reports its settlement as the fetch wrapper does after a paid 200. */
    async payAndSettle(paymentRequired: { accepts: object[] } = challenge()): Promise<void> {
      const paymentPayload = await this.pay(paymentRequired);
      await this.respond({ paymentPayload, settleResponse: { success: true, transaction: '0x1' } });
    },
    async respond(context: ResponseContext): Promise<void> {
      for (const hook of responses) await hook(context);
    },
  };
}

/** One request the fake Spotcheck received. */
export type Seen = { path: string; headers: Headers; body: Record<string, unknown> };

/** A Spotcheck whose answers are scripted per route; every request is kept. */
export function fakeSpotcheck() {
  const seen: Seen[] = [];
  const scripts: Record<string, Array<() => Response | Promise<Response>>> = { check: [], status: [] };
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    seen.push({ path, headers: request.headers, body: JSON.parse(await request.text()) });
    const route = path.endsWith('payment-status') ? 'status' : 'check';
    const next = scripts[route]?.shift();
    if (!next) throw new Error(`fake Spotcheck: no answer scripted for ${route}`);
    return next();
  };
  return {
    fetch,
    seen,
    checks: () => seen.filter((s) => !s.path.endsWith('payment-status')),
    statuses: () => seen.filter((s) => s.path.endsWith('payment-status')),
    onCheck(...answers: Array<() => Response | Promise<Response>>) {
      scripts['check']?.push(...answers);
    },
    onStatus(...answers: Array<() => Response | Promise<Response>>) {
      scripts['status']?.push(...answers);
    },
  };
}

/** A JSON answer. */
export const json = (status: number, body: unknown) => () =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
