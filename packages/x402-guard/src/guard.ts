/**
 * The guard: Spotcheck inside an x402 client's payment path. `attachGuard(client, options)` registers four hooks on
 * an `x402Client` (`@x402/core` 2.27): before a payment is created it asks Spotcheck about exactly the challenge the
 * client received and the requirement it selected, and aborts unless the verdict is `pay` and the approved terms hash
 * is the selected requirement's; it also refuses to sign again for a URL while an earlier payment of it may land.
 * After creation and on the paid response it keeps track of each payment's outcome.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Approvals, approvalExpiry, createApprovals } from './approvals.ts';
import { type Call, createPayments, encodePayload, normalizeUrl, type Payments } from './payments.ts';
import { type ResignDeps, resignGate } from './resign.ts';
import { askCheck, type CheckAnswer, type Reply, type SpotcheckClient } from './spotcheck.ts';
import { type RequirementLike, requirementSha256 } from './terms.ts';
import type { GuardEvent, GuardOptions } from './types.ts';

/** The parts of `x402Client` the guard hooks into (structural, so any 2.x client with these hooks fits). */
export type GuardableClient = {
  onBeforePaymentCreation(
    hook: (context: CreationContext) => Promise<undefined | { abort: true; reason: string }>,
  ): unknown;
  onAfterPaymentCreation(
    hook: (context: CreationContext & { paymentPayload: object }) => Promise<void>,
  ): unknown;
  onPaymentResponse(hook: (context: ResponseContext) => Promise<undefined>): unknown;
};

/** What the client passes before creating a payment. */
export type CreationContext = { paymentRequired: object; selectedRequirements: object };

/** What the client passes once a paid request completed. */
export type ResponseContext = {
  paymentPayload: object;
  settleResponse?: { success: boolean; transaction?: string };
  paymentRequired?: object;
  error?: Error;
};

/** A guard attached to one client. */
export type Guard = {
  /**
   * Wraps a paying fetch (`wrapFetchWithPayment(fetch, client)`): the guard then checks the URL and method actually
   * requested (not only the URL the seller's challenge names), tells a request still in flight from one that
   * failed, and sees transport errors after a payment was sent. Without it the hooks still guard every payment.
   */
  track(payingFetch: typeof fetch): typeof fetch;
  /** Forgets every earlier payment of `url`, landed or not: the next payment for it is checked as a new purchase. */
  forget(url: string): void;
  /** The payments whose outcome the guard does not know yet, oldest first. */
  unresolved(): Array<{ url: string; state: 'sent' | 'unknown' | 'landed'; paymentPayload: string }>;
};

type Context = {
  options: GuardOptions;
  spotcheck: SpotcheckClient;
  approvals: Approvals;
  payments: Payments;
  calls: AsyncLocalStorage<Call>;
  resign: ResignDeps;
  now: () => number;
  report: (event: GuardEvent) => void;
};

/** Attaches the guard to `client` (its hooks run for every payment the client creates) and returns it. */
export function attachGuard(client: GuardableClient, options: GuardOptions): Guard {
  const ctx = createContext(options);
  client.onBeforePaymentCreation((creation) => beforeCreation(ctx, creation));
  client.onAfterPaymentCreation(async (created) => afterCreation(ctx, created.paymentPayload));
  client.onPaymentResponse(async (response) => {
    onResponse(ctx, response);
    return undefined;
  });
  return {
    track: (payingFetch) => trackedFetch(ctx, payingFetch),
    forget: (url) => {
      const key = normalizeUrl(url);
      if (key !== null) ctx.payments.forget(key);
    },
    unresolved: () =>
      ctx.payments.all().map((r) => ({ url: r.url, state: r.state, paymentPayload: r.header })),
  };
}

function createContext(options: GuardOptions): Context {
  const now = options.now ?? Date.now;
  const report = (event: GuardEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A listener's failure never changes a payment decision.
    }
  };
  const spotcheck: SpotcheckClient = {
    service: options.service,
    key: options.key,
    endUser: options.endUser,
    timeoutMs: options.timeoutMs ?? 5000,
    fetch: options.fetch ?? globalThis.fetch,
  };
  const payments = createPayments();
  return {
    options,
    spotcheck,
    approvals: createApprovals(),
    payments,
    calls: new AsyncLocalStorage<Call>(),
    now,
    report,
    resign: {
      spotcheck,
      payments,
      pendingWaitMs: options.pendingWaitMs ?? 0,
      now,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      report,
    },
  };
}

type Abort = { abort: true; reason: string };

async function beforeCreation(ctx: Context, creation: CreationContext): Promise<undefined | Abort> {
  const call = ctx.calls.getStore();
  const selected = creation.selectedRequirements as RequirementLike;
  const url = normalizeUrl(call?.url ?? challengeResource(creation.paymentRequired, selected) ?? '');
  const method = call?.method === 'POST' ? 'POST' : 'GET';
  if (url === null) return undecided(ctx, '(unknown)', method, 'no_resource_url');
  const gate = await resignGate(ctx.resign, url);
  if (!gate.allow) return { abort: true, reason: gate.reason };
  const termsSha256 = requirementSha256(selected);
  if (termsSha256 === null) return refuse(ctx, url, method, 'unreadable_terms', null, null);
  if (ctx.approvals.has({ url, method, termsSha256 }, ctx.now())) {
    ctx.report({ type: 'approved', url, method, termsSha256, receiptUrl: null, reused: true });
    return undefined;
  }
  const expect = ctx.options.expect ?? {};
  const reply = await askCheck(ctx.spotcheck, {
    url,
    method,
    paymentRequired: creation.paymentRequired,
    selectedRequirement: creation.selectedRequirements,
    payTo: expect.payTo,
    network: expect.network,
    maxPriceUsd: expect.maxPriceUsd,
    expirySkewS: ctx.options.expirySkewS === false ? null : (ctx.options.expirySkewS ?? 30),
  });
  return judge(ctx, { url, method, termsSha256 }, reply);
}

function judge(
  ctx: Context,
  asked: { url: string; method: string; termsSha256: string },
  reply: Reply<CheckAnswer>,
): undefined | Abort {
  const { url, method, termsSha256 } = asked;
  if (reply.kind === 'failed') return undecided(ctx, url, method, reply.cause);
  // A challenge Spotcheck refuses to read (another resource, undecodable, too large, a requirement it does not
  // offer) is a refusal, not a missing answer: open mode never pays it.
  if (reply.kind === 'rejected') return refuse(ctx, url, method, reply.code, null, null);
  const answer = reply.answer;
  if (answer.verdict !== 'pay')
    return refuse(ctx, url, method, answer.reason_code, answer.verdict, answer.receipt_url);
  if (answer.payment_terms_sha256 !== termsSha256)
    return refuse(ctx, url, method, 'terms_hash_mismatch', answer.verdict, answer.receipt_url);
  const expiresAt = approvalExpiry(answer.probe, ctx.now());
  if (expiresAt !== null) ctx.approvals.add(asked, expiresAt);
  ctx.report({ type: 'approved', url, method, termsSha256, receiptUrl: answer.receipt_url, reused: false });
  return undefined;
}

function refuse(
  ctx: Context,
  url: string,
  method: string,
  reason: string,
  verdict: string | null,
  receiptUrl: string | null,
): Abort {
  ctx.report({ type: 'refused', url, method, reason, verdict, receiptUrl });
  const receipt = receiptUrl === null ? '' : ` (receipt ${receiptUrl})`;
  return { abort: true, reason: `spotcheck refused ${url}: ${verdict ?? 'refused'}/${reason}${receipt}` };
}

function undecided(ctx: Context, url: string, method: string, cause: string): undefined | Abort {
  const failureMode = ctx.options.failureMode ?? 'closed';
  const paid = failureMode === 'open';
  ctx.report({ type: 'undecided', url, method, cause, failureMode, paid });
  if (paid) return undefined;
  return { abort: true, reason: `spotcheck could not decide on ${url} (${cause}); failing closed` };
}

function afterCreation(ctx: Context, paymentPayload: object): void {
  const call = ctx.calls.getStore() ?? null;
  const payload = paymentPayload as { resource?: { url?: unknown }; accepted?: RequirementLike };
  const resource = call?.url ?? challengeResource(payload, payload.accepted ?? null) ?? '';
  const url = normalizeUrl(resource);
  if (url === null) return;
  ctx.payments.add({
    url,
    payload: paymentPayload,
    header: encodePayload(paymentPayload),
    state: 'sent',
    call,
    landed: null,
  });
}

function onResponse(ctx: Context, response: ResponseContext): void {
  const record = ctx.payments.find(response.paymentPayload);
  if (record === null) return;
  if (response.settleResponse?.success === true) {
    ctx.payments.remove(record);
    return;
  }
  record.state = 'unknown';
  const cause = response.error
    ? 'transport_error'
    : response.settleResponse
      ? 'settle_failed'
      : 'no_settlement';
  ctx.report({ type: 'outcome_unknown', url: record.url, cause });
}

function trackedFetch(ctx: Context, payingFetch: typeof fetch): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const call: Call = { url: request.url, method: request.method.toUpperCase(), live: true };
    let response: Response | null = null;
    try {
      response = await ctx.calls.run(call, () => payingFetch(input, init));
      return response;
    } finally {
      call.live = false;
      concludeCall(ctx, call, response);
    }
  };
}

/** A tracked request is over: its payments not yet concluded by a settlement are settled or unknown now. */
function concludeCall(ctx: Context, call: Call, response: Response | null): void {
  const settled = response?.ok && settlementSucceeded(response);
  for (const record of ctx.payments.all()) {
    if (record.call !== call || record.state !== 'sent') continue;
    if (settled) {
      ctx.payments.remove(record);
      continue;
    }
    record.state = 'unknown';
    ctx.report({
      type: 'outcome_unknown',
      url: record.url,
      cause: response === null ? 'transport_error' : 'no_settlement',
    });
  }
}

/** True when the response carries a settlement that succeeded (`PAYMENT-RESPONSE`, or v1 `X-PAYMENT-RESPONSE`). */
function settlementSucceeded(response: Response): boolean {
  const header = response.headers.get('PAYMENT-RESPONSE') ?? response.headers.get('X-PAYMENT-RESPONSE');
  if (header === null) return false;
  try {
    const settle = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { success?: unknown };
    return settle.success === true;
  } catch {
    return false;
  }
}

/** The resource a challenge names: `resource.url` (v2), else the selected requirement's `resource` (v1). */
function challengeResource(paymentRequired: object, selected: RequirementLike | null): string | null {
  const resource = (paymentRequired as { resource?: { url?: unknown } }).resource;
  if (resource && typeof resource.url === 'string') return resource.url;
  return selected && typeof selected.resource === 'string' ? selected.resource : null;
}
