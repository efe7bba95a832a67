/**
 * `GET` and `POST /v1/products/endpoint-spot-check` (spec §4). Bad input is a 400 with a stable code; failures of
 * the target are a 200 with a verdict (spec §7). Who is asking decides the rest (`resolveAsker`): exempt and
 * hosted keys, dry runs (free, 50 a day per caller, never paid for), paid checks through x402, then free checks (5
 * a day per client, 25 per client network) and the 402.
 */
import type { H3, H3Event } from 'h3';
import { LIMITS } from '../../core/limits.ts';
import { answerFree, noStore, resolveAsker, takeDryRun, takeFree } from '../access.ts';
import { readJsonObject } from '../body.ts';
import { type CheckAccess, draftCheck, runCheck } from '../check.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { answerHosted, takeRate } from '../hosted-access.ts';
import { type CheckParams, type ParamResult, parseCheckParams } from '../params.ts';
import { queryOf } from '../query.ts';

const PATH = '/v1/products/endpoint-spot-check';

/** Registers the check routes. */
export function checkRoutes(app: H3, deps: AppDeps): void {
  app.get(PATH, (event) => handle(event, deps, queryOf(event)));
  app.post(PATH, async (event) => handle(event, deps, await readJsonObject(event)));
}

async function handle(event: H3Event, deps: AppDeps, raw: Record<string, unknown>) {
  const parsed = parseCheckParams(raw);
  // A dry run is read before anything is sold: a payment sent with one is never taken.
  const dryRun = parsed.ok && parsed.value.mode === 'dry-run';
  const asker = resolveAsker(event, deps.gate, deps.hosted, { hosted: true, dryRun });
  if (asker.tier === 'paid') return sellCheck(event, deps, parsed);
  noStore(event, asker);

  const params = validated(parsed);
  if (asker.tier === 'exempt') {
    const checkType = asker.key.name === 'self' ? 'self-checked' : 'dry-run';
    const result = await runCheck(deps, params, { tier: 'exempt', checkType, attached: null });
    if (dryRun) return { ...result.free, access: { tier: 'exempt' } };
    return { ...result.full, reputation: await deps.reputation(params), access: { tier: 'exempt' } };
  }
  if (asker.tier === 'hosted' && deps.hosted) {
    const hosted = { ...deps, hosted: deps.hosted };
    if (dryRun) {
      // A dry run is never billed: rate-limited like every hosted call, answered in the dry-run shape.
      await takeRate(event, hosted.hosted, asker.caller);
      const result = await runCheck(deps, params, { tier: 'hosted', checkType: 'dry-run', attached: null });
      return { ...result.free, access: { tier: 'hosted' }, access_tier: 'hosted' };
    }
    return answerHosted(
      event,
      hosted,
      asker.caller,
      'check',
      async (attached) => {
        const result = await runCheck(deps, params, { tier: 'hosted', checkType: 'dry-run', attached });
        return {
          body: { ...result.full, reputation: await deps.reputation(params) },
          receiptId: result.receipt.id,
        };
      },
      () => sellCheck(event, deps, parsed),
    );
  }
  return freeCheck(event, deps, params);
}

/** Paid: payment first, then parameters, then the receipt, issued only once the settlement landed (issue 12). */
function sellCheck(event: H3Event, deps: AppDeps, parsed: ParamResult<CheckParams>) {
  return deps.sales.sell(event, 'check', async () => {
    const params = validated(parsed);
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

async function freeCheck(event: H3Event, deps: AppDeps, params: CheckParams) {
  const dryRun = params.mode === 'dry-run';
  const grant = dryRun
    ? await takeDryRun(event, deps.gate, params, {
        perCaller: LIMITS.dryRunsPerDay,
        perAddress: LIMITS.dryRunsPerAddress,
        perNetwork: LIMITS.dryRunsPerNetwork,
        perSite: LIMITS.dryRunsPerSite,
      })
    : await takeFree(event, deps.gate, 'check', {
        perAddress: LIMITS.freeChecksPerDay,
        perNetwork: LIMITS.freeChecksPerNetwork,
        perSite: LIMITS.freeChecksPerSite,
      });
  if (!grant) {
    if (dryRun) {
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
  const access: CheckAccess = { tier: 'free', checkType: 'dry-run', attached: grant.record };
  return answerFree(grant, async () => (await runCheck(deps, params, access)).free);
}

/** The parsed parameters, or the 400 of the first bad one (thrown where the tier's order says). */
function validated(parsed: ParamResult<CheckParams>): CheckParams {
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  return parsed.value;
}
