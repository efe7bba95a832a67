/**
 * `GET` and `POST /v1/products/payment-status` (spec §4, §7, §8): did a Base USDC (EIP-3009) payment land, and is
 * signing a new one safe? Order: exempt key; a payment header (the paid flow: the input is checked after the
 * payment is verified, and a 400 or 503 then settles nothing); a bare request answers 402; bad input is a 400
 * that is never metered; then 5 free checks per client per UTC day (with network ceilings), then 402.
 *
 * `chain_unavailable` (503) is answered before a free use is taken when no RPC source is configured, and gives
 * the free use back when no configured source answered: nothing charged, no free check used (spec §7).
 */
import type { H3, H3Event } from 'h3';
import { LIMITS } from '../../core/limits.ts';
import { isBareRequest, type PaymentStatusQuery, parsePaymentStatusInput } from '../../core/payment-input.ts';
import { answerFree, noStore, resolveAsker, takeFree } from '../access.ts';
import { readJsonObject } from '../body.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { answerHosted } from '../hosted-access.ts';
import {
  draftPaymentStatus,
  type PaymentStatusAccess,
  type PaymentStatusDeps,
  runPaymentStatus,
} from '../payment-status.ts';
import { queryOf } from '../query.ts';

const PATH = '/v1/products/payment-status';
const PRICE_TEXT = 'USD 0.02';

/** Registers the payment-status routes. */
export function paymentStatusRoutes(app: H3, deps: AppDeps): void {
  app.get(PATH, (event) => handle(event, deps, queryOf(event)));
  app.post(PATH, async (event) => handle(event, deps, await readJsonObject(event)));
}

async function handle(event: H3Event, deps: AppDeps, raw: Record<string, unknown>) {
  const asker = resolveAsker(event, deps.gate, deps.hosted, { hosted: true, dryRun: false });
  if (asker.tier === 'paid') return sellStatus(event, deps, raw);

  if (asker.tier === 'free' && isBareRequest(raw)) {
    return deps.sales.paymentRequired(
      event,
      'payment-status',
      `Send payment_payload, tx_hash, or from with nonce. A payment-status check costs ${PRICE_TEXT}; ${LIMITS.freePaymentStatusPerDay} a day are free.`,
    );
  }
  const query = validated(raw);
  noStore(event, asker);
  if (asker.tier === 'exempt')
    return { ...(await answer(deps, query, { tier: 'exempt', attached: null })), access: { tier: 'exempt' } };
  if (asker.tier === 'hosted' && deps.hosted) {
    chainOf(deps);
    return answerHosted(
      event,
      { ...deps, hosted: deps.hosted },
      asker.caller,
      'payment-status',
      async (attached) => {
        const body = await answer(deps, query, { tier: 'hosted', attached });
        return { body, receiptId: body.id };
      },
      () => sellStatus(event, deps, raw),
    );
  }

  // Nothing to read with: refuse before a free use is taken.
  chainOf(deps);
  const grant = await takeFree(event, deps.gate, 'payment_status', {
    perAddress: LIMITS.freePaymentStatusPerDay,
    perNetwork: LIMITS.freePaymentStatusPerNetwork,
    perSite: LIMITS.freePaymentStatusPerSite,
  });
  if (!grant) {
    return deps.sales.paymentRequired(
      event,
      'payment-status',
      `Free payment-status checks for today are used up; this check costs ${PRICE_TEXT}.`,
    );
  }
  // A 503 (no chain source answered) is no answer: the free check goes back.
  return answerFree(grant, () => answer(deps, query, { tier: 'free', attached: grant.record }));
}

/** Paid: the `ps-` receipt is issued only once the settlement landed, naming its transaction (issue 12). */
function sellStatus(event: H3Event, deps: AppDeps, raw: Record<string, unknown>) {
  return deps.sales.sell(event, 'payment-status', async () => {
    const draft = chainAnswered(await draftPaymentStatus(runDepsOf(deps), validated(raw)));
    return { status: 200, complete: (access) => draft.issue(access, null) };
  });
}

/** The answer without `access`; throws the 503 `chain_unavailable` API error when no source answered. */
async function answer(deps: AppDeps, query: PaymentStatusQuery, access: PaymentStatusAccess) {
  return chainAnswered(await runPaymentStatus(runDepsOf(deps), query, access)).body;
}

function runDepsOf(deps: AppDeps): PaymentStatusDeps {
  return { ...deps, chain: chainOf(deps) };
}

/** The outcome when a chain source answered; else the 503 `chain_unavailable` API error. */
function chainAnswered<T extends { ok: boolean }>(outcome: T): Extract<T, { ok: true }> {
  if (outcome.ok) return outcome as Extract<T, { ok: true }>;
  throw apiError(
    503,
    'chain_unavailable',
    'No chain source answered; nothing was charged and no free check was used. Try again shortly.',
    { 'retry-after': '5' },
  );
}

function chainOf(deps: AppDeps): PaymentStatusDeps['chain'] {
  if (deps.chain === null) {
    throw apiError(
      503,
      'chain_unavailable',
      'No chain source is configured: set RPC_URLS (two or more independent Base RPC URLs, comma-separated).',
    );
  }
  return deps.chain;
}

function validated(raw: Record<string, unknown>): PaymentStatusQuery {
  const parsed = parsePaymentStatusInput(raw);
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  return parsed.value;
}
