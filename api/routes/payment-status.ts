/**
 * `GET` and `POST /v1/products/payment-status` (docs/api.md §4, §7, §8): did a Base USDC (EIP-3009) payment land,
 * and is signing a new one safe? Who may call and in what order is the route's access policy
 * (`ACCESS_POLICIES.paymentStatus`, run by `answerMetered`): exempt and hosted keys; a payment header (the paid flow:
 * the input is checked after the payment is verified, and a 400 or 503 then settles nothing); a bare request
 * answers 402; bad input is a 400 that is never metered; then 5 free checks per client per UTC day (with network
 * ceilings), then 402.
 *
 * `chain_unavailable` (503) is answered before a free use is taken when no RPC source is configured, and gives
 * the free use back when no configured source answered: nothing charged, no free check used (docs/api.md §7).
 */
import type { H3, H3Event } from 'h3';
import { isBareRequest, type PaymentStatusQuery, parsePaymentStatusInput } from '../../core/payment-input.ts';
import { answerMetered } from '../access-meter.ts';
import { ACCESS_POLICIES } from '../access-policies.ts';
import { readJsonObject } from '../body.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { draftPaymentStatus, type PaymentStatusDeps, runPaymentStatus } from '../payment-status.ts';
import { queryOf } from '../query.ts';

const PATH = '/v1/products/payment-status';

/** Registers the payment-status routes. */
export function paymentStatusRoutes(app: H3, deps: AppDeps): void {
  app.get(PATH, (event) => handle(event, deps, queryOf(event)));
  app.post(PATH, async (event) => handle(event, deps, await readJsonObject(event)));
}

function handle(event: H3Event, deps: AppDeps, raw: Record<string, unknown>) {
  return answerMetered(event, deps, ACCESS_POLICIES.paymentStatus, {
    input: () => parsePaymentStatusInput(raw),
    isBare: () => isBareRequest(raw),
    // Nothing to read with: refused before a free use or a hosted call is taken.
    ready: () => void chainOf(deps),
    // A 503 (no chain source answered) is no answer: the unit goes back.
    answer: async (query: PaymentStatusQuery, grant) => {
      const access = { tier: grant.tier, attached: grant.attached };
      const body = chainAnswered(await runPaymentStatus(runDepsOf(deps), query, access)).body;
      return { body, receiptId: body.id };
    },
    // Paid: the `ps-` receipt is issued only once the settlement landed, naming its transaction.
    sell: async (query) => {
      const draft = chainAnswered(await draftPaymentStatus(runDepsOf(deps), query));
      return { status: 200, complete: (access) => draft.issue(access, null) };
    },
  });
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
