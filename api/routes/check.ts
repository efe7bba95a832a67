/**
 * `GET` and `POST /v1/products/endpoint-spot-check` (docs/api.md §4). Bad input is a 400 with a stable code;
 * failures of the target are a 200 with a verdict (docs/api.md §7). Who may call and in what order is the check's
 * access policy (`ACCESS_POLICIES.check`, run by `answerMetered`): exempt and hosted keys, dry runs (free, 50 a day
 * per caller, never paid for), paid checks through x402, then free checks (5 a day per client, 25 per client
 * network) and the 402. This file only reads the input and makes the answer each tier shows.
 */
import type { H3, H3Event } from 'h3';
import { answerMetered, type Grant } from '../access-meter.ts';
import { ACCESS_POLICIES } from '../access-policies.ts';
import { readJsonObject } from '../body.ts';
import type { PaidAccess } from '../check.ts';
import { type CheckAccess, draftCheck, runCheck } from '../check.ts';
import { checkAlternatives } from '../check-alternatives.ts';
import type { AppDeps } from '../deps.ts';
import { type CheckParams, parseCheckParams } from '../params.ts';
import { queryOf } from '../query.ts';

const PATH = '/v1/products/endpoint-spot-check';

/** Registers the check routes. */
export function checkRoutes(app: H3, deps: AppDeps): void {
  app.get(PATH, (event) => handle(event, deps, queryOf(event)));
  app.post(PATH, async (event) => handle(event, deps, await readJsonObject(event)));
}

function handle(event: H3Event, deps: AppDeps, raw: Record<string, unknown>) {
  return answerMetered(event, deps, ACCESS_POLICIES.check, {
    input: () => parseCheckParams(raw),
    dryRunOf: (params) => (params.mode === 'dry-run' ? params : null),
    answer: (params, grant) => answer(deps, params, grant),
    sell: (params) => sell(deps, params),
  });
}

/**
 * The unpaid answer: the short form (docs/api.md §2.4) to free callers and to every dry run, the full form
 * (docs/api.md §2.1) with the host's reputation to exempt and hosted callers.
 */
async function answer(deps: AppDeps, params: CheckParams, grant: Grant) {
  const access: CheckAccess = {
    tier: grant.tier,
    // `self-checked` only for the service's own self-test client, the exempt key named `self`.
    checkType: grant.tier === 'exempt' && grant.key.name === 'self' ? 'self-checked' : 'dry-run',
    attached: grant.attached,
  };
  const result = await runCheck(deps, params, access);
  const receiptId = result.receipt.id;
  // Only a skip of a check naming a task gets `alternatives`; every other answer keeps its bytes.
  const alternatives = await checkAlternatives(deps, params, result.free.verdict);
  if (grant.tier === 'free' || params.mode === 'dry-run')
    return { body: { ...result.free, ...alternatives }, receiptId };
  const reputation = await deps.reputation(params);
  return { body: { ...result.full, reputation, ...alternatives }, receiptId };
}

/** Paid: the receipt is issued only once the settlement landed, naming its transaction. */
async function sell(deps: AppDeps, params: CheckParams) {
  const draft = await draftCheck(deps, params, 'dry-run');
  const body = {
    ...draft.full,
    reputation: await deps.reputation(params),
    ...(await checkAlternatives(deps, params, draft.full.verdict)),
  };
  return {
    status: 200,
    complete: async (access: PaidAccess) => {
      await draft.issue(access, null);
      return body;
    },
  };
}
