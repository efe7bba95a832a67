/**
 * `GET` and `POST /v1/products/endpoint-spot-check` (spec §4). Bad input is a 400 with a stable code; failures of
 * the target are a 200 with a verdict (spec §7). Free checks (5 a day per client, 25 per client network), dry runs
 * (50 a day per caller, with address and network ceilings), exempt keys, then paid checks through x402.
 */
import type { H3, H3Event } from 'h3';
import { LIMITS } from '../../core/limits.ts';
import { answerFree, exemptKeyOf, hasPayment, takeDryRun, takeFree } from '../access.ts';
import { readJsonObject } from '../body.ts';
import { type CheckAccess, draftCheck, runCheck } from '../check.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { type CheckParams, parseCheckParams } from '../params.ts';
import { queryOf } from '../query.ts';

const PATH = '/v1/products/endpoint-spot-check';

/** Registers the check routes. */
export function checkRoutes(app: H3, deps: AppDeps): void {
  app.get(PATH, (event) => handle(event, deps, queryOf(event)));
  app.post(PATH, async (event) => handle(event, deps, await readJsonObject(event)));
}

async function handle(event: H3Event, deps: AppDeps, raw: Record<string, unknown>) {
  const exempt = exemptKeyOf(event, deps.gate);
  const paying = exempt === null && hasPayment(event);

  if (paying) {
    // Paid: payment first, then parameters, then settlement only after a successful answer (spec §4); the receipt
    // is issued only once the settlement landed, naming its transaction (issue 12).
    return deps.sales.sell(event, 'check', async () => {
      const params = validated(raw);
      const draft = await draftCheck(deps, params, 'dry-run');
      const body = { ...draft.full, reputation: await deps.reputation(params) };
      return {
        status: 200,
        complete: async (access) => {
          await draft.issue(access, null);
          return body;
        },
      };
    });
  }

  const params = validated(raw);
  if (exempt) {
    const checkType = exempt.name === 'self' ? 'self-checked' : 'dry-run';
    const result = await runCheck(deps, params, { tier: 'exempt', checkType, quota: null });
    return { ...result.full, reputation: await deps.reputation(params), access: { tier: 'exempt' } };
  }

  const grant =
    params.mode === 'dry-run'
      ? takeDryRun(event, deps.gate, params, {
          perCaller: LIMITS.dryRunsPerDay,
          perAddress: LIMITS.dryRunsPerAddress,
          perNetwork: LIMITS.dryRunsPerNetwork,
          perSite: LIMITS.dryRunsPerSite,
        })
      : takeFree(event, deps.gate, 'check', {
          perAddress: LIMITS.freeChecksPerDay,
          perNetwork: LIMITS.freeChecksPerNetwork,
          perSite: LIMITS.freeChecksPerSite,
        });
  if (!grant) {
    if (params.mode === 'dry-run') {
      throw apiError(
        429,
        'dry_run_limit',
        `Dry runs are limited to ${LIMITS.dryRunsPerDay} per caller per UTC day, ${LIMITS.dryRunsPerAddress} per client address and ${LIMITS.dryRunsPerNetwork} per client network.`,
      );
    }
    return deps.sales.paymentRequired(
      event,
      'check',
      'Free checks for today are used up; this check costs USD 0.02.',
    );
  }
  const access: CheckAccess = { tier: 'free', checkType: 'dry-run', quota: grant.record };
  return answerFree(grant, async () => (await runCheck(deps, params, access)).free);
}

function validated(raw: Record<string, unknown>): CheckParams {
  const parsed = parseCheckParams(raw);
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  return parsed.value;
}
