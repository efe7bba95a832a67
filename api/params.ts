/**
 * Parameters of the endpoint check (spec §4), from a query string (all strings) or a JSON body (typed values or
 * strings). Each bad parameter has its own stable code; unknown parameters are ignored so that agents adding
 * their own tags are not refused.
 */
import * as v from 'valibot';
import {
  NetworkField,
  PayToField,
  SkewSecondsField,
  TaskNameField,
  UsdAmountField,
} from '../core/input-fields.ts';
import type { HttpMethod } from '../core/model.ts';
import { normalizeNetwork } from '../core/networks.ts';
import { LABEL_RULE, LabelSchema } from '../core/text.ts';
import { parseTargetUrl } from '../core/url.ts';

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
};

export type ParamResult<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

/** Parses check parameters; `raw` is a parsed query (values may be arrays when repeated) or a JSON body object. */
export function parseCheckParams(raw: Record<string, unknown>): ParamResult<CheckParams> {
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value))
      return fail('duplicate_parameter', `Parameter ${name} is given more than once.`);
  }
  if (raw.url === undefined || raw.url === '') return fail('missing_url', 'Parameter url is required.');
  if (typeof raw.url !== 'string') return fail('bad_url', 'url must be a string.');
  const target = parseTargetUrl(raw.url);
  if (!target.ok) return fail('bad_url', target.message);

  const method = raw.method === undefined ? 'GET' : raw.method;
  if (method !== 'GET' && method !== 'POST') return fail('bad_method', 'method must be GET or POST.');
  const task = optional(raw.task, TaskNameField);
  if (task === false) return fail('bad_task', 'task must be a task name from /v1/tasks.');
  const claimedPrice = optional(raw.claimed_price, UsdAmountField);
  if (claimedPrice === false)
    return fail('bad_claimed_price', 'claimed_price must be a non-negative USD amount.');
  const payTo = optional(raw.pay_to, PayToField);
  if (payTo === false)
    return fail('bad_pay_to', 'pay_to must be a 0x address (40 hex digits) or a Solana address.');
  const network = optional(raw.network, NetworkField);
  if (network === false) return fail('bad_network', 'network must be a CAIP-2 id such as eip155:8453.');
  const client = optional(raw.client, LabelSchema);
  if (client === false) return fail('bad_client', `client must be ${LABEL_RULE}.`);
  const ref = optional(raw.ref, LabelSchema);
  if (ref === false) return fail('bad_ref', `ref must be ${LABEL_RULE}.`);

  const mode = raw.mode === undefined || raw.mode === '' ? 'live' : raw.mode;
  if (mode !== 'live' && mode !== 'dry-run') return fail('bad_mode', 'mode must be live or dry-run.');
  const checkExpiry = flag(raw.check_expiry);
  if (checkExpiry === null) return fail('bad_check_expiry', 'check_expiry must be 1 to enable it (or 0).');
  const skew = raw.skew_s === undefined || raw.skew_s === '' ? 30 : v.safeParse(SkewSecondsField, raw.skew_s);
  if (typeof skew !== 'number' && !skew.success)
    return fail('bad_skew_s', 'skew_s must be an integer from 0 to 300.');

  return {
    ok: true,
    value: {
      url: target.url.href,
      urlNorm: target.normalized,
      method,
      task,
      claimedPrice,
      payTo,
      network: network === null ? null : normalizeNetwork(network),
      client,
      ref,
      // spec §4: a ref of the form dry-run-<caller> sets mode dry-run.
      mode: ref?.startsWith('dry-run-') ? 'dry-run' : mode,
      checkExpiry,
      skewS: typeof skew === 'number' ? skew : skew.output,
    },
  };
}

/** The value when present and valid, null when absent, false when present and invalid. */
function optional<T>(value: unknown, schema: v.GenericSchema<unknown, T>): T | null | false {
  if (value === undefined || value === null || value === '') return null;
  const parsed = v.safeParse(schema, value);
  return parsed.success ? parsed.output : false;
}

function flag(value: unknown): boolean | null {
  if (
    value === undefined ||
    value === null ||
    value === '' ||
    value === '0' ||
    value === false ||
    value === 0
  ) {
    return false;
  }
  return value === '1' || value === true || value === 1 ? true : null;
}

function fail(code: string, message: string): { ok: false; code: string; message: string } {
  return { ok: false, code, message };
}
