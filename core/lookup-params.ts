/**
 * Parameters of the catalog lookup (docs/api.md §4 `GET /v1/lookup`, `GET /v1/lookup/paid`), from a query string (all
 * strings) or typed values (MCP), parsed with the schema the lookup publishes (`lookupInputSchema` of
 * `core/request-schemas.ts`), which carries each parameter's stable code (`docs/lookup.md`); unknown parameters
 * are ignored so that agents adding their own tags are not refused.
 */
import type { InputResult } from './input-codes.ts';
import { parseInput } from './input-codes.ts';
import { lookupInputSchema } from './request-schemas.ts';

export type LookupParams = {
  task: string | null;
  /** Canonical USD decimal. */
  maxPriceUsd: string | null;
  n: number;
  limit: number;
  /** The service id, also when the caller sent the endpoint URL. */
  endpoint: string | null;
  client: string | null;
  ref: string | null;
  /** Attribution only (which vendor the caller paid); never changes the answer. */
  payer: string | null;
};

export type LookupParamsResult = InputResult<LookupParams>;

export const LOOKUP_DEFAULTS = { n: 5, limit: 10, max: 20 } as const;

/**
 * Parses lookup parameters. `tasks` are the catalog's task names; `requireReference` is the paid route's rule that
 * `task` or `endpoint` must be given.
 * @example parseLookupParams({ task: 'fx-rate', n: '3' }, { tasks: ['fx-rate'], requireReference: true })
 */
export function parseLookupParams(
  raw: unknown,
  options: { tasks: readonly string[]; requireReference: boolean },
): LookupParamsResult {
  const parsed = parseInput(lookupInputSchema(options), raw);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  return {
    ok: true,
    value: {
      task: input.task ?? null,
      maxPriceUsd: input.max_price ?? null,
      n: input.n ?? LOOKUP_DEFAULTS.n,
      limit: input.limit ?? LOOKUP_DEFAULTS.limit,
      endpoint: input.endpoint ?? null,
      client: input.client ?? null,
      ref: input.ref ?? null,
      payer: input.payer ?? null,
    },
  };
}
