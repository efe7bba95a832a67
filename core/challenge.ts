/**
 * Decoding a third party's HTTP 402 into a {@link Challenge} (docs/x402.md §2.6 and §9; docs/api.md §3.1 rules 4
 * and 5). The answer is hostile input: it goes through valibot, never a cast, and every failure is a value.
 *
 * Order, and the notes each path leaves in `Challenge.notes`:
 * 1. `PAYMENT-REQUIRED` header (v2). Whitespace or a base64url alphabet are repaired and noted
 *    (`header_whitespace`, `header_base64url`, both lenient). A header that cannot be decoded or validated
 *    does not end the decode: it is noted `header_invalid` and the body is tried.
 * 2. JSON body with `x402Version: 1` (v1). After a broken header it is lenient, `header_invalid_body_used`.
 * 3. JSON body with `x402Version: 2` and no usable header: lenient, `v2_body_only` (the official client
 *    cannot pay such an endpoint), plus the two header notes when a broken header came first.
 *
 * Decisions where the notes leave room:
 * - Any status other than 402 is `absent`, even with a `PAYMENT-REQUIRED` header: only a 402 asks for payment.
 * - A 402 is `absent` when it has no header and its body is not a JSON object with an `x402Version` member
 *   (plain text, HTML, `{}`, a bare `accepts` array). A body that fails to parse as JSON but mentions
 *   `"x402Version"` counts as a broken x402 body (`invalid`), typically a truncated one.
 * - A 402 with a header that is present but broken, and no usable body, is `invalid`: terms were offered but
 *   cannot be read.
 * - One bad option makes the whole challenge `invalid`, so a hostile option can never slip through; an option
 *   whose `payTo` or `asset` is not an address of its network (`core/address.ts`) is a bad option.
 * - Headers and bodies over {@link MAX_CHALLENGE_CHARS} characters are `invalid` without being parsed, and
 *   more than 64 options are refused.
 */
import * as v from 'valibot';
import {
  AcceptV1Schema,
  AcceptV2Schema,
  ExtraExpirySchema,
  PaymentRequiredV1Schema,
  PaymentRequiredV2Schema,
  toUnixSeconds,
} from './_challenge-schemas.ts';
import { isAddressOn } from './address.ts';
import { decodeBase64Utf8 } from './base64.ts';
import type { Accept, Challenge, ChallengeResult, Issue } from './model.ts';
import { normalizeNetwork } from './networks.ts';

/** Largest header value or body decoded: 1 MiB of characters. */
export const MAX_CHALLENGE_CHARS = 1024 * 1024;
/** At most this many issues are reported; the first ones are enough to say why. */
const MAX_ISSUES = 32;
const MAX_RECEIVED = 80;
const MAX_MESSAGE = 200;

/** The parts of an HTTP answer a challenge is read from. Header names are lower-case. */
export type ChallengeInput = { status: number; headers: Record<string, string>; body: string | null };

/** A challenge decoded from its JSON, before the notes on where it was read from. */
export type Decoded =
  | { ok: true; value: Omit<Challenge, 'source' | 'lenient' | 'notes'> }
  | { ok: false; issues: Issue[] };

const ABSENT: ChallengeResult = { ok: false, kind: 'absent' };

/**
 * Decodes the x402 payment challenge of an unpaid answer. Never throws.
 *
 * @example decodeChallenge({ status: 402, headers: { 'payment-required': header }, body: '{}' })
 */
export function decodeChallenge(res: ChallengeInput): ChallengeResult {
  try {
    return decode(res);
  } catch (error) {
    // Safety net only: a bug must not turn hostile input into a crash of the check.
    return invalid([issue('', 'a decodable challenge', 'exception', `decoder failed: ${String(error)}`)]);
  }
}

function decode(res: ChallengeInput): ChallengeResult {
  if (res.status !== 402) return ABSENT;
  const header = findHeader(res.headers, 'payment-required');
  const issues: Issue[] = [];
  const notes: string[] = [];
  if (header !== undefined) {
    const fromHeader = readHeader(header);
    if (fromHeader.ok) return fromHeader;
    issues.push(...fromHeader.issues);
    notes.push('header_invalid');
  }
  const body = readBody(res.body);
  if (body.kind === 'none') return header === undefined ? ABSENT : invalid(issues);
  if (body.kind === 'broken') return invalid([...issues, ...body.issues]);
  const decoded = body.version === 1 ? validateV1(body.json, 'body') : validateV2(body.json, 'body');
  if (!decoded.ok) return invalid([...issues, ...decoded.issues]);
  if (header !== undefined) notes.push('header_invalid_body_used');
  if (body.version === 2) notes.push('v2_body_only');
  return { ok: true, value: { ...decoded.value, source: 'body', lenient: notes.length > 0, notes } };
}

function readHeader(raw: unknown): { ok: true; value: Challenge } | { ok: false; issues: Issue[] } {
  if (typeof raw !== 'string') return fail('header', 'a string', typeof raw, 'header value is not text');
  const read = readBase64Json(raw, 'header');
  if (!read.ok) return read;
  const decoded = validateV2(read.json, 'header');
  if (!decoded.ok) return decoded;
  const notes = read.notes;
  return { ok: true, value: { ...decoded.value, source: 'header', lenient: notes.length > 0, notes } };
}

/**
 * The JSON that base64 `raw` encodes, as x402 headers carry it (`PAYMENT-REQUIRED`, docs/x402.md §0.3), with the
 * repairs a header may need noted (`header_whitespace`, `header_base64url`). `where` names the value in issues.
 *
 * @example readBase64Json('eyJhIjoxfQ==', 'header') // { ok: true, json: { a: 1 }, notes: [] }
 */
export function readBase64Json(
  raw: string,
  where: string,
): { ok: true; json: unknown; notes: string[] } | { ok: false; issues: Issue[] } {
  if (raw.length > MAX_CHALLENGE_CHARS) {
    return fail(where, 'at most 1 MiB', `${raw.length} characters`, `${where} is too large to decode`);
  }
  const notes: string[] = [];
  let text = raw;
  if (/\s/.test(text)) {
    text = text.replace(/\s+/g, '');
    notes.push('header_whitespace');
  }
  if (/[-_]/.test(text)) {
    text = text.replace(/-/g, '+').replace(/_/g, '/');
    notes.push('header_base64url');
  }
  const bare = text.endsWith('==') ? text.slice(0, -2) : text.endsWith('=') ? text.slice(0, -1) : text;
  if (bare === '' || bare.length % 4 === 1 || !/^[A-Za-z0-9+/]*$/.test(bare)) {
    return fail(where, 'base64 (RFC 4648)', raw, `${where} is not base64`);
  }
  try {
    const utf8 = decodeBase64Utf8(bare);
    try {
      return { ok: true, json: JSON.parse(utf8), notes };
    } catch {
      return fail(where, 'base64 of JSON', utf8, `decoded ${where} is not JSON`);
    }
  } catch {
    return fail(where, 'base64 of UTF-8 text', raw, `decoded ${where} is not UTF-8`);
  }
}

/**
 * A challenge given as its JSON (a v2 `PaymentRequired` or a v1 402 body), decoded by the rules the probe's own
 * challenge is held to: one bad option refuses the whole challenge. For a challenge a client received and sent
 * with its check (`core/sent-challenge.ts`).
 */
export function decodeChallengeJson(json: unknown, where: string): Decoded {
  const version = isRecord(json) ? json.x402Version : undefined;
  if (version === 1) return validateV1(json, where);
  if (version === 2) return validateV2(json, where);
  return {
    ok: false,
    issues: [issue(`${where}.x402Version`, '1 | 2', describe(version), 'not an x402 challenge')],
  };
}

/**
 * One requirement (an `accepts[]` entry, v1 with `maxAmountRequired` or v2 with `amount`) decoded by the rules of an
 * option of the probe's challenge: the requirement a client selected to sign.
 */
export function decodeRequirement(
  json: unknown,
  where: string,
): { ok: true; value: Accept } | { ok: false; issues: Issue[] } {
  const v1 = isRecord(json) && Object.hasOwn(json, 'maxAmountRequired');
  const parsed = v1 ? v.safeParse(AcceptV1Schema, json) : v.safeParse(AcceptV2Schema, json);
  if (!parsed.success) return { ok: false, issues: toIssues(parsed.issues, where) };
  const accepts: Accept[] = [];
  const issues: Issue[] = [];
  const output = parsed.output as CheckedAccept & { maxAmountRequired?: string };
  pushAccept(accepts, issues, { ...output, amount: output.maxAmountRequired ?? output.amount }, where);
  const accept = accepts[0];
  return accept === undefined ? { ok: false, issues } : { ok: true, value: accept };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

type Body =
  | { kind: 'none' }
  | { kind: 'broken'; issues: Issue[] }
  | { kind: 'x402'; version: 1 | 2; json: unknown };

function readBody(body: unknown): Body {
  if (typeof body !== 'string' || body === '') return { kind: 'none' };
  if (body.length > MAX_CHALLENGE_CHARS) {
    return {
      kind: 'broken',
      issues: [issue('body', 'at most 1 MiB', `${body.length} characters`, 'body too large')],
    };
  }
  const text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  if (!/^\s*\{/.test(text)) return { kind: 'none' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (!text.includes('"x402Version"')) return { kind: 'none' };
    return {
      kind: 'broken',
      issues: [issue('body', 'JSON', text, 'body mentions x402Version but is not JSON')],
    };
  }
  if (
    json === null ||
    typeof json !== 'object' ||
    Array.isArray(json) ||
    !Object.hasOwn(json, 'x402Version')
  ) {
    return { kind: 'none' };
  }
  const version = (json as { x402Version: unknown }).x402Version;
  if (version === 1 || version === 2) return { kind: 'x402', version, json };
  return {
    kind: 'broken',
    issues: [issue('body.x402Version', '1 | 2', describe(version), 'unknown x402 version')],
  };
}

function validateV2(json: unknown, where: string): Decoded {
  const top = v.safeParse(PaymentRequiredV2Schema, json);
  if (!top.success) return { ok: false, issues: toIssues(top.issues, where) };
  const accepts: Accept[] = [];
  const issues: Issue[] = [];
  for (const [i, item] of top.output.accepts.entries()) {
    const parsed = v.safeParse(AcceptV2Schema, item);
    const at = `${where}.accepts[${i}]`;
    if (parsed.success) pushAccept(accepts, issues, parsed.output, at);
    else issues.push(...toIssues(parsed.issues, at));
  }
  if (issues.length > 0) return { ok: false, issues: issues.slice(0, MAX_ISSUES) };
  const r = top.output.resource;
  const resource = r && (r.url ?? r.description ?? r.mimeType) !== null ? r : null;
  return { ok: true, value: { version: 2, accepts, resource } };
}

function validateV1(json: unknown, where: string): Decoded {
  const top = v.safeParse(PaymentRequiredV1Schema, json);
  if (!top.success) return { ok: false, issues: toIssues(top.issues, where) };
  const accepts: Accept[] = [];
  const issues: Issue[] = [];
  let resource: Challenge['resource'] = null;
  for (const [i, item] of top.output.accepts.entries()) {
    const parsed = v.safeParse(AcceptV1Schema, item);
    const at = `${where}.accepts[${i}]`;
    if (!parsed.success) {
      issues.push(...toIssues(parsed.issues, at));
      continue;
    }
    const { resource: url, description, mimeType } = parsed.output;
    // v1 carries resource metadata per option; the first option speaks for the endpoint (docs/x402.md §2.2).
    if (i === 0 && (url ?? description ?? mimeType) !== null) resource = { url, description, mimeType };
    pushAccept(accepts, issues, { ...parsed.output, amount: parsed.output.maxAmountRequired }, at);
  }
  if (issues.length > 0) return { ok: false, issues: issues.slice(0, MAX_ISSUES) };
  return { ok: true, value: { version: 1, accepts, resource } };
}

type CheckedAccept = v.InferOutput<typeof AcceptV2Schema>;

/** Adds one schema-valid option, after checking the expiry members its `extra` may carry. */
function pushAccept(accepts: Accept[], issues: Issue[], a: CheckedAccept, at: string): void {
  const extra = a.extra ?? null;
  let inExtra: v.InferOutput<typeof ExtraExpirySchema> = {};
  if (extra !== null) {
    const parsed = v.safeParse(ExtraExpirySchema, extra);
    if (!parsed.success) {
      issues.push(...toIssues(parsed.issues, `${at}.extra`));
      return;
    }
    inExtra = parsed.output;
  }
  // An option that cannot be signed (payTo or asset not an address of its network) spoils the whole challenge,
  // like any other bad option: a hostile option is never approved, nor hidden among valid ones.
  const network = normalizeNetwork(a.network);
  for (const member of ['payTo', 'asset'] as const) {
    if (isAddressOn(network, a[member]) === false) {
      issues.push(
        issue(`${at}.${member}`, `an address on ${network}`, describe(a[member]), 'not a signable address'),
      );
      return;
    }
  }
  // Own validBefore first, then extra's, then expiresAt at either level (docs/x402.md §2.6; expiry.ts uses it).
  const stated = a.validBefore ?? inExtra.validBefore ?? a.expiresAt ?? inExtra.expiresAt ?? null;
  accepts.push({
    scheme: a.scheme,
    network,
    amount: a.amount,
    asset: a.asset,
    payTo: a.payTo,
    maxTimeoutSeconds: a.maxTimeoutSeconds ?? null,
    validBefore: stated === null ? null : toUnixSeconds(stated),
    extra,
  });
}

function findHeader(headers: Record<string, string>, name: string): unknown {
  if (headers === null || typeof headers !== 'object') return undefined;
  if (Object.hasOwn(headers, name)) return headers[name];
  // Names should arrive lower-cased; tolerate a caller that forgot (docs/x402.md §9.5).
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

function toIssues(issues: readonly v.BaseIssue<unknown>[], prefix: string): Issue[] {
  return issues.slice(0, MAX_ISSUES).map((i) => {
    const path = (i.path ?? []).map((item) =>
      typeof item.key === 'number' ? `[${item.key}]` : `.${String(item.key)}`,
    );
    return issue(prefix + path.join(''), i.expected ?? i.type, i.received, i.message);
  });
}

/** A short, JSON-like rendering of a value, without walking nested structures. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(clip(value, MAX_RECEIVED));
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'Array' : 'Object';
}

function issue(path: string, expected: string, received: string, message: string): Issue {
  return {
    path,
    expected: clip(expected, MAX_RECEIVED),
    received: clip(received, MAX_RECEIVED),
    message: clip(message, MAX_MESSAGE),
  };
}

function fail(
  path: string,
  expected: string,
  received: string,
  message: string,
): { ok: false; issues: Issue[] } {
  return { ok: false, issues: [issue(path, expected, received, message)] };
}

function invalid(issues: Issue[]): ChallengeResult {
  return { ok: false, kind: 'invalid', issues: issues.slice(0, MAX_ISSUES) };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
