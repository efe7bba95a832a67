/**
 * Parameters of the endpoint check (docs/api.md §4), from a query string (all strings) or a JSON body (typed values or
 * strings), parsed with the schema the check publishes (`CheckInputSchema`), which carries each parameter's stable
 * code. Unknown parameters are ignored so that agents adding their own tags are not refused.
 */
import type { SentCheck } from '../core/challenge-bound.ts';
import { type InputResult, parseInput } from '../core/input-codes.ts';
import type { HttpMethod } from '../core/model.ts';
import { normalizeNetwork } from '../core/networks.ts';
import { CheckInputSchema } from '../core/request-schemas.ts';

export type CheckParams = {
  url: string;
  urlNorm: string;
  method: HttpMethod;
  task: string | null;
  claimedPrice: string | null;
  payTo: string | null;
  network: string | null;
  client: string | null;
  ref: string | null;
  mode: 'live' | 'dry-run';
  checkExpiry: boolean;
  skewS: number;
  /** The challenge the caller received (`payment_required`) and the requirement it selected; null without one. */
  sent: SentCheck | null;
};

/**
 * Parses check parameters: the parameters, or the 400 of the first bad one. `raw` is a parsed query (values may be
 * arrays when repeated) or a JSON body object.
 */
export function parseCheckParams(raw: unknown): InputResult<CheckParams> {
  const parsed = parseInput(CheckInputSchema, raw);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const ref = input.ref ?? null;
  return {
    ok: true,
    value: {
      url: input.url.url,
      urlNorm: input.url.normalized,
      method: input.method ?? 'GET',
      task: input.task ?? null,
      claimedPrice: input.claimed_price ?? null,
      payTo: input.pay_to ?? null,
      network: input.network === undefined ? null : normalizeNetwork(input.network),
      client: input.client ?? null,
      ref,
      // docs/api.md §4: a ref of the form dry-run-<caller> sets mode dry-run.
      mode: ref?.startsWith('dry-run-') ? 'dry-run' : (input.mode ?? 'live'),
      checkExpiry: input.check_expiry === '1' || input.check_expiry === true || input.check_expiry === 1,
      skewS: input.skew_s ?? 30,
      sent:
        input.payment_required === undefined
          ? null
          : { challenge: input.payment_required, selected: input.selected_requirement ?? null },
    },
  };
}
