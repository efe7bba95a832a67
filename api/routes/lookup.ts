/**
 * `GET /v1/lookup` and `GET /v1/lookup/paid` (spec §1.4, §4, §7, §8): services for a task ranked from the service's
 * own paid calls. Free lookups (5 a day per client, with network ceilings), exempt keys, then paid lookups through x402. Every tier runs
 * `answer()` on the same data; the tier only decides the `access` block (spec §1, pricing principle).
 */
import type { H3, H3Event } from 'h3';
import { rankServices } from '../../core/catalog.ts';
import { LIMITS } from '../../core/limits.ts';
import { type LookupParams, parseLookupParams } from '../../core/lookup-params.ts';
import { answerFree, type FreeGrant, noStore, resolveAsker, takeFree } from '../access.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { queryOf } from '../query.ts';
import { journalQuotaUse } from '../quota-use.ts';
import { publishedTasks } from './tasks.ts';

/** Registers the lookup routes. */
export function lookupRoutes(app: H3, deps: AppDeps): void {
  app.get('/v1/lookup', (event) => free(event, deps));
  // No free quota: the 402 comes first, parameters are checked before settlement (spec §4).
  app.get('/v1/lookup/paid', (event) => paid(event, deps, true));
}

async function free(event: H3Event, deps: AppDeps) {
  await deps.paidCalls?.refresh();
  const asker = resolveAsker(event, deps.gate, deps.hosted, { hosted: false, dryRun: false });
  if (asker.tier === 'paid') return paid(event, deps, false);
  noStore(event, asker);
  // Spec §7: a 400 is never metered, so parameters are checked before any quota is taken.
  const params = validated(event, deps, false);
  if (asker.tier === 'exempt') {
    const body = await answer(deps, params);
    await recordAttribution(deps, params, 'exempt');
    return { ...body, access: { tier: 'exempt' } };
  }

  const grant = await takeFree(event, deps.gate, 'lookup', {
    perAddress: LIMITS.freeLookupsPerDay,
    perNetwork: LIMITS.freeLookupsPerNetwork,
    perSite: LIMITS.freeLookupsPerSite,
  });
  if (!grant) {
    return deps.sales.paymentRequired(
      event,
      'lookup',
      `Free lookups for today are used up (${LIMITS.freeLookupsPerDay} per UTC day); a lookup costs USD 0.02 at /v1/lookup/paid.`,
    );
  }
  return freeAnswer(deps, params, grant);
}

function paid(event: H3Event, deps: AppDeps, requireReference: boolean) {
  return deps.sales.sell(event, 'lookup', async () => {
    await deps.paidCalls?.refresh();
    const params = validated(event, deps, requireReference);
    const body = await answer(deps, params);
    // Recorded only once the settlement landed: nothing of an unsettled call is written (CONTRIBUTING "Payments").
    return {
      status: 200,
      complete: async () => {
        await recordAttribution(deps, params, 'paid');
        return body;
      },
    };
  });
}

async function freeAnswer(deps: AppDeps, params: LookupParams, grant: FreeGrant) {
  return answerFree(grant, async () => {
    const body = await answer(deps, params);
    await journalQuotaUse(deps.ledger, grant.record);
    await recordAttribution(deps, params, 'free');
    return body;
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
 * Records who asked and whom they paid (spec §4: `client` app name, `ref` attribution, `payer` the vendor paid) in
 * the journal, next to the receipts; never part of the answer, never a reason to change it. Nothing when none is set.
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

function validated(event: H3Event, deps: AppDeps, requireReference: boolean): LookupParams {
  const tasks = publishedTasks(deps).map((task) => task.name);
  const parsed = parseLookupParams(queryOf(event), { tasks, requireReference });
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  return parsed.value;
}
