/**
 * The access meter: one function runs the ladder of every metered route from its declared policy
 * (`api/access-policies.ts`): who is asking (a key, a dry run, a payment, else the free tier), then the input,
 * then the tier's unit (a free use, a dry run, a hosted use and its rate) or the answer that ends the request (401,
 * 400, 402, 429, the route's 503). A route only parses its input and makes its answer.
 *
 * What it keeps on every route (CONTRIBUTING "Quota accounting", "Hosted mode", "Payments"): a unit is reserved
 * synchronously once the input is known good, so a 400 is never metered; an answer that could not be produced gives
 * its unit back; a use is durable before its answer leaves, in the receipt's own journal record or alone; a paid
 * call's input is checked after the payment is verified and before anything is settled.
 */
import type { H3Event } from 'h3';
import type { InputResult } from '../core/input-codes.ts';
import {
  type Asker,
  answerFree,
  type ExemptKey,
  type FreeGrant,
  hasPayment,
  noStore,
  resolveAsker,
  takeDryRun,
  takeFree,
} from './access.ts';
import type { AccessPolicy } from './access-policies.ts';
import type { AppDeps, SaleAnswer } from './deps.ts';
import { apiError } from './errors.ts';
import type { HostedCaller } from './hosted.ts';
import { answerHosted, type HostedAccess, takeRate } from './hosted-access.ts';
import { journalQuotaUse, type QuotaUse } from './quota-use.ts';

/**
 * Who an unpaid answer is for, and what the answer's receipt journals with it (`attached`): the free units used,
 * the hosted use billed (null when the shared meter counts it where it is reserved, or for a hosted dry run), or
 * nothing.
 */
export type Grant =
  | { tier: 'exempt'; key: ExemptKey; attached: null }
  | { tier: 'hosted'; caller: HostedCaller; attached: unknown }
  | { tier: 'free'; attached: QuotaUse };

/** Who a dry run is counted by. */
export type DryRunCaller = { ref: string | null; client: string | null };

/** An unpaid answer as the route makes it: the body without `access`, and the id of the receipt it issued. */
export type Produced<B> = { body: B; receiptId: string | null };

/** What a metered route brings: its input, and how it answers each tier. */
export type MeteredRoute<T, B extends object> = {
  /** The input parsed with the schema the route publishes; read once, where the ladder needs it. */
  input: () => InputResult<T> | Promise<InputResult<T>>;
  /** Who a dry run is counted by, null when the input asks for none (a policy with `dryRun`). */
  dryRunOf?: (input: T) => DryRunCaller | null;
  /** True when the request names nothing the route reads (a policy with `bare`). */
  isBare?: () => boolean;
  /** Throws the route's error (a 503) when it cannot answer at all; runs before any unit is taken. */
  ready?: () => void;
  /** The unpaid answer (a route whose policy has no free tier and ignores keys never makes one). */
  answer?: (input: T, grant: Grant) => Promise<Produced<B>>;
  /** The paid answer: runs after the payment is verified; the sale settles only if it succeeds. */
  sell: (input: T) => Promise<SaleAnswer>;
};

/** The `access` block of an unpaid answer (docs/api.md §2.5); a paid one gets its block from the sale. */
export type UnpaidAccess =
  | { tier: 'exempt' }
  | { tier: 'free'; free_per_day: number; free_used_today: number }
  | HostedAccess['access'];

/** An unpaid answer as it leaves: the route's body with `access` (and `access_tier` when hosted). */
export type MeteredAnswer<B> = B & { access: UnpaidAccess; access_tier?: 'hosted' };

/** What the meter reads: keys and quotas (`gate`), hosted mode, the seller, and the journal for lone uses. */
export type MeterDeps = Pick<AppDeps, 'gate' | 'hosted' | 'sales' | 'ledger'>;

/** A policy that sells every call, whoever asks: its route needs the seller only. */
type AlwaysSold = { keys: 'ignored'; free: null };

/**
 * Answers one call of a metered route: the 401, 400, 402, 429 or 503 its policy and input call for, the sale of a
 * paid call, or the route's answer with its `access` block.
 */
export async function answerMetered<P extends AccessPolicy, T, B extends object>(
  event: H3Event,
  deps: P extends AlwaysSold ? Pick<AppDeps, 'sales'> : MeterDeps,
  policy: P,
  route: MeteredRoute<T, B>,
): Promise<Response | MeteredAnswer<B>> {
  let parsed: Promise<InputResult<T>> | null = null;
  const read = () => {
    parsed ??= Promise.resolve().then(route.input);
    return parsed;
  };
  const sell = () => deps.sales.sell(event, policy.offer, async () => route.sell(validated(await read())));
  if (policy.keys === 'ignored' && policy.free === null) return sell();
  return meterTiers(event, deps as MeterDeps, policy, route, read, sell);
}

/** The ladder of a route that is not always sold. */
async function meterTiers<T, B extends object>(
  event: H3Event,
  deps: MeterDeps,
  policy: AccessPolicy,
  route: MeteredRoute<T, B>,
  read: () => Promise<InputResult<T>>,
  sell: () => Promise<Response>,
): Promise<Response | MeteredAnswer<B>> {
  // A dry run is known before anything is sold: a payment sent with one is never taken.
  const dryRun = policy.dryRun === null ? null : dryRunCallerOf(await read(), route);
  const asker = askerOf(event, deps, policy, dryRun !== null);
  if (asker.tier === 'paid' || (asker.tier === 'free' && policy.free === null)) return sell();
  if (asker.tier === 'free' && policy.bare !== null && route.isBare?.()) {
    return deps.sales.paymentRequired(event, policy.offer, policy.bare);
  }
  noStore(event, asker);
  const input = validated(await read());
  route.ready?.();
  const answer = (grant: Grant) => {
    if (!route.answer) throw new Error(`[spotcheck] [access] no unpaid answer for ${policy.offer}`);
    return route.answer(input, grant);
  };

  switch (asker.tier) {
    case 'exempt':
      return {
        ...(await answer({ tier: 'exempt', key: asker.key, attached: null })).body,
        access: { tier: 'exempt' },
      };
    case 'hosted':
      return answerHostedTier(event, deps, policy, asker.caller, dryRun !== null, answer, sell);
    default:
      return answerFreeTier(event, deps, policy, dryRun, answer);
  }
}

/** Who is asking, as far as the route's policy reads keys. */
function askerOf(event: H3Event, deps: MeterDeps, policy: AccessPolicy, dryRun: boolean): Asker {
  if (policy.keys === 'ignored') return hasPayment(event) ? { tier: 'paid' } : { tier: 'free' };
  return resolveAsker(event, deps.gate, deps.hosted, {
    hosted: policy.keys === 'exempt-and-integrator',
    dryRun,
  });
}

/**
 * A hosted call: a dry run, or a call of a route whose policy bills hosted callers on an invoice line of its own
 * (`hostedBilling: 'invoice-line'`), is rate-limited and never metered; any other is billed (`answerHosted`).
 */
async function answerHostedTier<B extends object>(
  event: H3Event,
  deps: MeterDeps,
  policy: AccessPolicy,
  caller: HostedCaller,
  dryRun: boolean,
  answer: (grant: Grant) => Promise<Produced<B>>,
  sell: () => Promise<Response>,
): Promise<Response | MeteredAnswer<B>> {
  const { hosted } = deps;
  // A hosted asker exists only where hosted mode is wired (`presentedAsker`).
  if (hosted === null) throw new Error('[spotcheck] [access] a hosted caller without hosted mode');
  if (dryRun || policy.hostedBilling === 'invoice-line') {
    await takeRate(event, hosted, caller);
    const { body } = await answer({ tier: 'hosted', caller, attached: null });
    // An invoiced route's answer is the caller's own (a watch's token), as a billed hosted answer is.
    if (!dryRun) event.res.headers.set('cache-control', 'private, no-store');
    return { ...body, access: { tier: 'hosted' }, access_tier: 'hosted' };
  }
  return answerHosted(
    event,
    { ...deps, hosted },
    caller,
    policy.offer,
    (attached) => answer({ tier: 'hosted', caller, attached }),
    sell,
  );
}

/** A free call or a dry run: one unit of its bucket, given back when no answer comes of it. */
async function answerFreeTier<B extends object>(
  event: H3Event,
  deps: MeterDeps,
  policy: AccessPolicy,
  dryRun: DryRunCaller | null,
  answer: (grant: Grant) => Promise<Produced<B>>,
): Promise<Response | MeteredAnswer<B>> {
  const grant = await takeUnit(event, deps, policy, dryRun);
  if (grant instanceof Response) return grant;
  return answerFree(grant, async () => {
    const { body, receiptId } = await answer({ tier: 'free', attached: grant.record });
    // A use no receipt carries is journaled alone, before the answer leaves.
    if (receiptId === null) await journalQuotaUse(deps.ledger, grant.record);
    return body;
  });
}

/** One dry run (else a 429) or one free use (else the 402) for the caller. */
async function takeUnit(
  event: H3Event,
  deps: MeterDeps,
  policy: AccessPolicy,
  dryRun: DryRunCaller | null,
): Promise<FreeGrant | Response> {
  // Only a policy with dry runs reads one, and only one with a free tier reaches it (else it sells).
  if (dryRun !== null && policy.dryRun !== null) {
    const grant = await takeDryRun(event, deps.gate, dryRun, policy.dryRun.limits);
    if (grant === null) throw apiError(429, 'dry_run_limit', policy.dryRun.usedUp);
    return grant;
  }
  if (policy.free === null) throw new Error(`[spotcheck] [access] no free tier for ${policy.offer}`);
  const grant = await takeFree(event, deps.gate, policy.free.bucket, policy.free.limits);
  return grant ?? deps.sales.paymentRequired(event, policy.offer, policy.free.usedUp);
}

function dryRunCallerOf<T>(parsed: InputResult<T>, route: MeteredRoute<T, object>): DryRunCaller | null {
  return parsed.ok && route.dryRunOf ? route.dryRunOf(parsed.value) : null;
}

/** The input, or the 400 of its first bad member (raised where the ladder checks it). */
function validated<T>(parsed: InputResult<T>): T {
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  return parsed.value;
}
