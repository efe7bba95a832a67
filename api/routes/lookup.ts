/**
 * `GET /v1/lookup` and `GET /v1/lookup/paid` (docs/api.md §1.4, §4, §7, §8): services for a task ranked from the
 * service's own paid calls. Who may call and in what order are the routes' access policies (`ACCESS_POLICIES.lookup`:
 * free lookups, 5 a day per client with network ceilings, exempt keys, then paid through x402;
 * `ACCESS_POLICIES.lookupPaid`: always paid). Every tier runs `answer()` on the same data; the tier only decides
 * the `access` block (docs/api.md §1, pricing principle).
 */
import type { H3, H3Event } from 'h3';
import { rankServices } from '../../core/catalog.ts';
import { type LookupParams, parseLookupParams } from '../../core/lookup-params.ts';
import { answerMetered } from '../access-meter.ts';
import { ACCESS_POLICIES } from '../access-policies.ts';
import type { AppDeps } from '../deps.ts';
import { queryOf } from '../query.ts';
import { publishedTasks } from './tasks.ts';

/** Registers the lookup routes. */
export function lookupRoutes(app: H3, deps: AppDeps): void {
  app.get('/v1/lookup', (event) => handle(event, deps, ACCESS_POLICIES.lookup, false));
  // No free quota: the 402 comes first, parameters are checked before settlement (docs/api.md §7).
  app.get('/v1/lookup/paid', (event) => handle(event, deps, ACCESS_POLICIES.lookupPaid, true));
}

function handle(
  event: H3Event,
  deps: AppDeps,
  policy: (typeof ACCESS_POLICIES)['lookup' | 'lookupPaid'],
  requireReference: boolean,
) {
  return answerMetered(event, deps, policy, {
    input: async () => {
      // Tasks of known-answer runs published since the last call are lookups' task names too.
      await deps.paidCalls?.refresh();
      const tasks = publishedTasks(deps).map((task) => task.name);
      return parseLookupParams(queryOf(event), { tasks, requireReference });
    },
    answer: async (params, grant) => {
      const body = await answer(deps, params);
      await recordAttribution(deps, params, grant.tier === 'exempt' ? 'exempt' : 'free');
      return { body, receiptId: null };
    },
    sell: async (params) => {
      const body = await answer(deps, params);
      // Recorded only once the settlement landed: nothing of an unsettled call is written (CONTRIBUTING "Payments").
      return {
        status: 200,
        complete: async () => {
          await recordAttribution(deps, params, 'paid');
          return body;
        },
      };
    },
  });
}

async function answer(deps: AppDeps, params: LookupParams) {
  const records = await deps.store.paidCalls({
    ...(params.task === null ? {} : { task: params.task }),
    ...(params.endpoint === null ? {} : { endpoint: params.endpoint }),
    perService: params.n,
  });
  return rankServices(records, {
    task: params.task,
    maxPriceUsd: params.maxPriceUsd,
    n: params.n,
    limit: params.limit,
  });
}

/**
 * Records who asked and whom they paid (docs/api.md §4: `client` app name, `ref` attribution, `payer` the vendor
 * paid) in the journal, next to the receipts; never part of the answer, never a reason to change it. Nothing when
 * none is set.
 */
async function recordAttribution(deps: AppDeps, params: LookupParams, tier: 'free' | 'paid' | 'exempt') {
  if (params.client === null && params.ref === null && params.payer === null) return;
  await deps.ledger.attach({
    lookup: {
      at: deps.now().toISOString(),
      tier,
      task: params.task,
      endpoint: params.endpoint,
      client: params.client,
      ref: params.ref,
      payer: params.payer,
    },
  });
}
