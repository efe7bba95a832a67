/**
 * The challenge a client received and sends with its check (`payment_required`, docs/api.md §4 "The check"), and the
 * requirement it selected to sign (`selected_requirement`): decoded by the rules the probe's own challenge is held to
 * (`core/challenge.ts`), bounded, hashed, and held to the checked URL. The fields are members of the check's
 * published input (`core/request-schemas.ts`); each failure answers with a stable 400 code (docs/api.md §7).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import * as v from 'valibot';
import { decodeChallengeJson, decodeRequirement, readBase64Json } from './challenge.ts';
import type { InputFailure } from './input-codes.ts';
import { canonicalJson } from './jcs.ts';
import type { Accept, Issue } from './model.ts';
import { normalizeNetwork, sameAddress } from './networks.ts';
import { parseTargetUrl } from './url.ts';

/** Largest challenge or requirement read: 16 KiB of base64 text, or of the canonical JSON of an object. */
export const MAX_SENT_CHARS = 16 * 1024;

/** A challenge a client sent, decoded. */
export type SentChallenge = {
  /** Its options, normalized as the probe's are (v1 `maxAmountRequired` as `amount`, v1 network names as CAIP-2). */
  accepts: Accept[];
  /** The resource URLs it names: a v2 challenge's `resource.url`, a v1 challenge's `resource` of every option. */
  resources: string[];
  /** Hex SHA-256 of the RFC 8785 text of the challenge's JSON: the same whichever form it was sent in. */
  sha256: string;
};

/** The 400 codes of the two members (docs/api.md §7). */
export const SENT_CHALLENGE_CODES = [
  'payment_required_invalid',
  'payment_required_too_large',
  'payment_required_resource_mismatch',
  'selected_requirement_not_offered',
] as const;

const TOO_LARGE = `payment_required must be at most ${MAX_SENT_CHARS} characters of base64, or an object of at most ${MAX_SENT_CHARS} bytes of canonical JSON.`;
const RESOURCE_MISMATCH = 'payment_required names another resource than url.';
const NOT_OFFERED = 'selected_requirement is not one of the options of payment_required.';
const ALONE = 'selected_requirement is read only with payment_required.';

type Read<T> = { ok: true; value: T } | { ok: false; message: string };

/** A member sent as base64 of its JSON (a query string, a header value) or, in a JSON body, as the object. */
const Base64OrObject = v.union([v.string(), v.looseObject({})]);

/** `payment_required`: the value of a v2 `PAYMENT-REQUIRED` header, base64 of a v1 402 body, or either as JSON. */
export const PaymentRequiredField = v.pipe(
  Base64OrObject,
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const read = readSentChallenge(dataset.value);
    if (read.ok) return read.value;
    addIssue({ message: read.message });
    return NEVER;
  }),
);

/** `selected_requirement`: the `accepts[]` entry the client selected, as base64 of its JSON or as the object. */
export const SelectedRequirementField = v.pipe(
  Base64OrObject,
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const read = readSelected(dataset.value);
    if (read.ok) return read.value;
    addIssue({ message: read.message });
    return NEVER;
  }),
);

/** The code and words of a bad `payment_required`. */
export function paymentRequiredFailure(issue: v.BaseIssue<unknown>): InputFailure {
  const { message } = issue;
  if (message === TOO_LARGE) return { code: 'payment_required_too_large', message };
  if (message === RESOURCE_MISMATCH) return { code: 'payment_required_resource_mismatch', message };
  return {
    code: 'payment_required_invalid',
    message: invalidMessage('payment_required', 'an x402 challenge', message),
  };
}

/** The code and words of a bad `selected_requirement`. */
export function selectedRequirementFailure(issue: v.BaseIssue<unknown>): InputFailure {
  const { message } = issue;
  if (message === NOT_OFFERED) return { code: 'selected_requirement_not_offered', message };
  if (message === ALONE) return { code: 'payment_required_invalid', message };
  return {
    code: 'payment_required_invalid',
    message: invalidMessage('selected_requirement', 'a payment requirement', message),
  };
}

/** What the check of the members together reads: the parsed url and the two members. */
type Together = {
  url: { url: string; normalized: string };
  payment_required?: SentChallenge | undefined;
  selected_requirement?: Accept | undefined;
};

/**
 * The members checked together, once each is good on its own: the challenge names no other resource than `url`, and
 * the selected requirement is one of its options. Returns the member to blame and why, or null.
 */
export function sentChallengeProblem(input: Together): { key: keyof Together; message: string } | null {
  const sent = input.payment_required;
  const selected = input.selected_requirement;
  if (sent === undefined)
    return selected === undefined ? null : { key: 'selected_requirement', message: ALONE };
  if (!sent.resources.every((resource) => sameResource(resource, input.url))) {
    return { key: 'payment_required', message: RESOURCE_MISMATCH };
  }
  if (selected !== undefined && !sent.accepts.some((offered) => sameOption(offered, selected))) {
    return { key: 'selected_requirement', message: NOT_OFFERED };
  }
  return null;
}

/**
 * Same payment terms (`payment_terms_sha256`'s four): network, amount, asset and `payTo`, addresses compared
 * case-insensitively.
 * @example sameOfferedTerms(accept, { ...accept, payTo: accept.payTo.toUpperCase() }) // true
 */
export function sameOfferedTerms(a: Accept, b: Accept): boolean {
  return (
    normalizeNetwork(a.network) === normalizeNetwork(b.network) &&
    a.amount === b.amount &&
    sameAddress(a.asset, b.asset) &&
    sameAddress(a.payTo, b.payTo)
  );
}

function sameOption(a: Accept, b: Accept): boolean {
  return a.scheme === b.scheme && sameOfferedTerms(a, b);
}

/** A resource URL names the checked URL: the same dedupe form (docs/api.md §2.10), a relative one read against it. */
function sameResource(resource: string, url: Together['url']): boolean {
  if (resource === '') return true;
  let absolute: string;
  try {
    absolute = new URL(resource, url.url).href;
  } catch {
    return false;
  }
  const target = parseTargetUrl(absolute);
  return target.ok && target.normalized === url.normalized;
}

function readSentChallenge(value: string | Record<string, unknown>): Read<SentChallenge> {
  const json = readJson(value, 'payment_required');
  if (!json.ok) return json;
  let canonical: string;
  try {
    canonical = canonicalJson(json.value);
  } catch {
    return { ok: false, message: 'not plain JSON' };
  }
  const bytes = utf8ToBytes(canonical);
  if (typeof value !== 'string' && bytes.length > MAX_SENT_CHARS) return { ok: false, message: TOO_LARGE };
  const decoded = decodeChallengeJson(json.value, 'payment_required');
  if (!decoded.ok) return { ok: false, message: firstIssue(decoded.issues) };
  return {
    ok: true,
    value: {
      accepts: decoded.value.accepts,
      resources: resourcesOf(json.value),
      sha256: bytesToHex(sha256(bytes)),
    },
  };
}

function readSelected(value: string | Record<string, unknown>): Read<Accept> {
  const json = readJson(value, 'selected_requirement');
  if (!json.ok) return json;
  const decoded = decodeRequirement(json.value, 'selected_requirement');
  return decoded.ok ? decoded : { ok: false, message: firstIssue(decoded.issues) };
}

/** The JSON of a member: the object as sent, or what its base64 text encodes. */
function readJson(value: string | Record<string, unknown>, where: string): Read<unknown> {
  if (typeof value !== 'string') return { ok: true, value };
  if (value.length > MAX_SENT_CHARS) {
    return {
      ok: false,
      message: where === 'payment_required' ? TOO_LARGE : `over ${MAX_SENT_CHARS} characters`,
    };
  }
  const read = readBase64Json(value, where);
  return read.ok ? { ok: true, value: read.json } : { ok: false, message: firstIssue(read.issues) };
}

/** The resource URLs a challenge's JSON names (it decoded, so its shape is known). */
function resourcesOf(json: unknown): string[] {
  const challenge = json as {
    x402Version: 1 | 2;
    resource?: unknown;
    accepts: Array<{ resource?: unknown }>;
  };
  const named =
    challenge.x402Version === 1
      ? challenge.accepts.map((accept) => accept.resource)
      : [
          typeof challenge.resource === 'object'
            ? (challenge.resource as { url?: unknown } | null)?.url
            : challenge.resource,
        ];
  return named.filter((url): url is string => typeof url === 'string');
}

function firstIssue(issues: Issue[]): string {
  const first = issues[0];
  return first === undefined ? 'not readable' : `${first.path}: ${first.message}`;
}

function invalidMessage(member: string, what: string, why: string): string {
  return `${member} is not ${what} Spotcheck can read (${why}).`;
}
