/**
 * Quality of the unpaid 402 (docs/api.md §2.1 `quality`): how well the target follows x402, judged against what
 * the official SDK client accepts. Metadata only: it never changes a verdict or a reason code.
 */
import { parsePaymentRequired } from '@x402/core/schemas';
import { decodeBase64Utf8 } from './base64.ts';
import type { ChallengeResult, ProbeOutcome, ProbeResponse } from './model.ts';
import { type ProbeState, probeStateOf } from './probe-state.ts';
import type { QualityCode } from './reasons.ts';

/**
 * The `quality` block of a check (docs/api.md §2.1), published as is; `probe_state` only when the probe ended before
 * a 402, why (`core/probe-state.ts`).
 */
export type Quality = {
  code: QualityCode;
  checks: Record<string, boolean | number | string | null>;
  probe_state?: ProbeState;
};

/** The SDK's own base64 gate for `PAYMENT-REQUIRED` (standard alphabet only, docs/x402.md §0.3). */
const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** `application/json` and `+json` types such as `application/problem+json`, parameters allowed. */
const JSON_TYPE = /^application\/(?:[a-z0-9.-]+\+)?json\s*(?:;|$)/i;

/**
 * Grades one probe. The first matching rule gives the code:
 * 1. no response (blocked, timeout, unreachable) → `quality_unreachable`;
 * 2. status other than 402 → `quality_bad_status`;
 * 3. no `content-type` at all, or a non-JSON one while the body is what carries the terms (v1, or no
 *    usable header) → `quality_bad_content_type`;
 * 4. terms missing or invalid, decoded only leniently, or failing the SDK's strict schema
 *    (`parsePaymentRequired` of `@x402/core/schemas`) → `quality_schema_mismatch`;
 * 5. a v1-only challenge, which current SDK clients cannot be shown to pay → `quality_unverified`;
 * 6. otherwise `quality_ok`.
 * `checks` holds the raw observations behind the code; `probe_state`, only for a probe that ended before a 402, why
 * (`core/probe-state.ts`).
 * @example assessQuality(outcome, challenge).code // 'quality_ok'
 */
export function assessQuality(outcome: ProbeOutcome, challenge: ChallengeResult | null): Quality {
  const probeState = probeStateOf(outcome);
  if (outcome.kind !== 'response')
    return { code: 'quality_unreachable', checks: unreachableChecks(), ...stateOf(probeState) };
  const response = outcome.response;
  const decoded = challenge?.ok === true ? challenge.value : null;
  const header = response.headers['payment-required'] ?? null;
  const contentType = response.headers['content-type'] ?? null;
  const contentTypeJson = contentType !== null && JSON_TYPE.test(contentType.trim());
  const body = parseBody(response);
  const strictHeader = header === null ? null : strictHeaderOk(header);
  const strictBody = body.ok ? parsePaymentRequired(body.value).success : false;

  const checks: Quality['checks'] = {
    status_402: response.status === 402,
    header_present: header !== null,
    header_strict_schema: strictHeader,
    body_json: body.ok,
    content_type_json: contentTypeJson,
    cache_control_no_store: /(?:^|,)\s*no-store\s*(?:,|$)/i.test(response.headers['cache-control'] ?? ''),
    accepts_count: decoded === null ? null : decoded.accepts.length,
    x402_version: decoded === null ? null : decoded.version,
    header_bytes: header === null ? null : new TextEncoder().encode(header).length,
  };

  if (response.status !== 402) return { code: 'quality_bad_status', checks, ...stateOf(probeState) };
  const bodyCarriesTerms = decoded === null || decoded.source === 'body';
  if (contentType === null || (bodyCarriesTerms && !contentTypeJson)) {
    return { code: 'quality_bad_content_type', checks };
  }
  const strict = decoded === null ? false : decoded.source === 'header' ? strictHeader === true : strictBody;
  if (decoded === null || decoded.lenient || !strict) return { code: 'quality_schema_mismatch', checks };
  if (decoded.version === 1) return { code: 'quality_unverified', checks };
  return { code: 'quality_ok', checks };
}

/** The `probe_state` member, present only when the probe ended before a 402 (receipts of 402s keep their bytes). */
function stateOf(state: ProbeState | null): { probe_state?: ProbeState } {
  return state === null ? {} : { probe_state: state };
}

function unreachableChecks(): Quality['checks'] {
  return {
    status_402: null,
    header_present: null,
    header_strict_schema: null,
    body_json: null,
    content_type_json: null,
    cache_control_no_store: null,
    accepts_count: null,
    x402_version: null,
    header_bytes: null,
  };
}

/** Decodes the header the way the SDK client does (no base64url, no whitespace) and runs its schema. */
function strictHeaderOk(header: string): boolean {
  if (!STRICT_BASE64.test(header)) return false;
  try {
    const json: unknown = JSON.parse(decodeBase64Utf8(header));
    return parsePaymentRequired(json).success;
  } catch {
    return false;
  }
}

function parseBody(response: ProbeResponse): { ok: true; value: unknown } | { ok: false } {
  if (response.body === null || response.bodyTruncated) return { ok: false };
  try {
    const value: unknown = JSON.parse(response.body);
    return { ok: true, value };
  } catch {
    return { ok: false };
  }
}
