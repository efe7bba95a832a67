/**
 * The `alternatives` member of a check answer (docs/api.md §2.1, `core/alternatives.ts`): read from the same paid
 * calls the lookup ranks, only for a check that names a task and ends in skip. Every tier adds the same member to
 * its answer, never to the receipt.
 */
import { type Alternative, alternativesOf } from '../core/alternatives.ts';
import { LOOKUP_DEFAULTS } from '../core/lookup-params.ts';
import type { AppDeps } from './deps.ts';
import type { CheckParams } from './params.ts';

/** What an answer spreads in: nothing (its bytes unchanged), the list, or null when the catalog could not be read. */
export type AlternativesMember = { alternatives?: Alternative[] | null };

/**
 * The alternatives of one answered check: `{}` unless `params.task` is set and `verdict` is `skip`.
 * @example { ...answer, ...(await checkAlternatives(deps, params, answer.verdict)) }
 */
export async function checkAlternatives(
  deps: Pick<AppDeps, 'store' | 'paidCalls' | 'baseUrl'>,
  params: CheckParams,
  verdict: string,
): Promise<AlternativesMember> {
  if (params.task === null || verdict !== 'skip') return {};
  const task = params.task;
  try {
    // Tasks and calls of known-answer runs published since the last look, as the lookup takes them in.
    await deps.paidCalls?.refresh();
    const records = await deps.store.paidCalls({ task, perService: LOOKUP_DEFAULTS.n });
    return {
      alternatives: alternativesOf(records, {
        task,
        maxPriceUsd: params.claimedPrice,
        checkedUrl: params.url,
        baseUrl: deps.baseUrl,
      }),
    };
  } catch (error) {
    // A catalog that cannot be read costs the list, never the answer (docs/api.md §2.1).
    console.error('[spotcheck] [check] alternatives unavailable', error);
    return { alternatives: null };
  }
}
