/**
 * Parameters of the catalog lookup (spec §4 `GET /v1/lookup`, `GET /v1/lookup/paid`), from a query string (all
 * strings) or typed values (MCP). Each bad parameter has its own stable code (`docs/lookup.md`); unknown parameters
 * are ignored so that agents adding their own tags are not refused.
 */
import * as v from 'valibot';
import { serviceIdOf } from './catalog.ts';
import { EvmAddressField, LookupCountField, TaskNameField, UsdAmountField } from './input-fields.ts';
import { LABEL_RULE, LabelSchema } from './text.ts';
import { parseTargetUrl } from './url.ts';

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

export type LookupParamsResult =
  | { ok: true; value: LookupParams }
  | { ok: false; code: string; message: string };

export const LOOKUP_DEFAULTS = { n: 5, limit: 10, max: 20 } as const;

/** A service id as {@link serviceIdOf} writes it: host (and port) then an optional path and query. */
export const ServiceIdField = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.regex(/^[a-z0-9.-]+(?::\d{1,5})?(?:[/?][\x21-\x7e]*)?$/),
);
/**
 * Parses lookup parameters. `tasks` are the catalog's task names; `requireReference` is the paid route's rule that
 * `task` or `endpoint` must be given.
 * @example parseLookupParams({ task: 'fx-rate', n: '3' }, { tasks: ['fx-rate'], requireReference: true })
 */
export function parseLookupParams(
  raw: Record<string, unknown>,
  options: { tasks: readonly string[]; requireReference: boolean },
): LookupParamsResult {
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value))
      return fail('duplicate_parameter', `Parameter ${name} is given more than once.`);
  }
  const task = optional(raw.task, TaskNameField);
  if (task === false)
    return fail('bad_task', 'task must be a task name (lower-case letters, digits, . _ -).');
  if (task !== null && !options.tasks.includes(task)) {
    return fail('unknown_task', `Task ${task} is not in the catalog; GET /v1/tasks lists the task names.`);
  }
  const maxPrice = optional(raw.max_price, UsdAmountField);
  if (maxPrice === false) return fail('bad_max_price', 'max_price must be a non-negative USD amount.');
  const n = count(raw.n, LOOKUP_DEFAULTS.n);
  if (n === false) return fail('bad_n', 'n must be an integer from 1 to 20.');
  const limit = count(raw.limit, LOOKUP_DEFAULTS.limit);
  if (limit === false) return fail('bad_limit', 'limit must be an integer from 1 to 20.');
  const endpoint = endpointOf(raw.endpoint);
  if (endpoint === false)
    return fail('bad_endpoint', 'endpoint must be a service id or an http(s) endpoint URL.');
  const client = optional(raw.client, LabelSchema);
  if (client === false) return fail('bad_client', `client must be ${LABEL_RULE}.`);
  const ref = optional(raw.ref, LabelSchema);
  if (ref === false) return fail('bad_ref', `ref must be ${LABEL_RULE}.`);
  const payer = optional(raw.payer, EvmAddressField);
  if (payer === false) return fail('bad_payer', 'payer must be a 0x wallet address (40 hex digits).');
  if (options.requireReference && task === null && endpoint === null) {
    return fail('missing_task_or_endpoint', 'The paid lookup needs task or endpoint.');
  }
  return { ok: true, value: { task, maxPriceUsd: maxPrice, n, limit, endpoint, client, ref, payer } };
}

/** The value when present and valid, null when absent, false when present and invalid. */
function optional<T>(value: unknown, schema: v.GenericSchema<unknown, T>): T | null | false {
  if (value === undefined || value === null || value === '') return null;
  const parsed = v.safeParse(schema, value);
  return parsed.success ? parsed.output : false;
}

function count(value: unknown, fallback: number): number | false {
  const parsed = optional(value, LookupCountField);
  return parsed === null ? fallback : parsed;
}

function endpointOf(value: unknown): string | null | false {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') return false;
  if (/^https?:\/\//i.test(value)) {
    const target = parseTargetUrl(value);
    return target.ok ? serviceIdOf(target.normalized) : false;
  }
  return v.safeParse(ServiceIdField, value).success ? value : false;
}

function fail(code: string, message: string): { ok: false; code: string; message: string } {
  return { ok: false, code, message };
}
