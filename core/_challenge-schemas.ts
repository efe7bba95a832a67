/**
 * valibot schemas for the parts of a third party's 402 that Spotcheck relies on (docs/x402.md §2.2). Internal to
 * `core/challenge.ts`. Stricter than the SDK where money is concerned (atomic amounts, bounded strings), looser
 * where it is not (resource metadata, `error`, `extensions`, unknown members are ignored).
 */
import * as v from 'valibot';
import { isAtomic } from './amount.ts';
import { hasHiddenCharacters, isPlainIdentifier } from './text.ts';

/** More options than any real seller offers; past it the challenge is refused rather than walked. */
export const MAX_ACCEPTS = 64;
/** How deep `extra` may nest: it is kept in decisions and receipts, which are walked recursively later. */
export const MAX_EXTRA_DEPTH = 16;
/** Metadata strings (resource URL, description, MIME type) are cut to this length. */
const MAX_META = 2048;
/** Latest accepted expiry, 9999-12-31T23:59:59Z; larger numbers are most likely milliseconds: never guess. */
const MAX_UNIX_SECONDS = 253_402_300_799;

/** Unix seconds as digits. */
const UNIX_DIGITS = /^\d{1,12}$/;
/** ISO 8601 date-time with an explicit zone (a zone-less time would depend on the host's TZ). */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;

// I-JSON text only: a lone UTF-16 surrogate cannot be put in RFC 8785 bytes, so a receipt naming it could never
// be signed. A seller sending one gets `bad_challenge`, not a failed check.
const wellFormed = v.check(
  (text: string) => !/\p{Cs}/u.test(text),
  'must be well-formed text (no lone surrogates)',
);
// Identifiers (scheme, network, asset, payTo) are signed into receipts and shown to people deciding to pay: no
// whitespace, and nothing invisible or reordering (a zero-width space after an address, a right-to-left override).
const field = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(256),
  wellFormed,
  v.check(isPlainIdentifier, 'must hold no whitespace or invisible characters'),
);
// One rule for amounts everywhere (core/amount.ts): canonical decimal digits, no leading zero, at most uint256.
// A padded amount such as "0010000" is refused rather than rewritten: the terms hash is computed over the string.
const atomic = v.pipe(
  v.string(),
  v.check(isAtomic, 'amount must be atomic units: decimal digits without leading zeros, at most 2^256 - 1'),
);
const timeout = v.nullish(v.pipe(v.number(), v.safeInteger(), v.minValue(0)));
// A custom guard rather than `v.record`, which would copy arrays into objects and walk every key.
const plainObject = v.pipe(
  v.custom<Record<string, unknown>>(
    (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
    'must be a JSON object',
  ),
  v.check(
    (value) => depthWithin(value, MAX_EXTRA_DEPTH),
    `must not nest deeper than ${MAX_EXTRA_DEPTH} levels or hold over 100000 values`,
  ),
);
const unixSeconds = v.union(
  [
    v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(MAX_UNIX_SECONDS)),
    v.pipe(
      v.string(),
      v.regex(UNIX_DIGITS),
      v.check((s) => Number(s) <= MAX_UNIX_SECONDS),
    ),
  ],
  'must be unix seconds (a non-negative integer or digit string)',
);
const instant = v.union(
  [
    unixSeconds,
    v.pipe(
      v.string(),
      v.regex(ISO_INSTANT),
      v.check((s) => isoSeconds(s) !== null),
    ),
  ],
  'must be unix seconds or an ISO 8601 date-time with a zone',
);
// Metadata may reach a receipt (payment status `claim.contact`): text that hides or reorders characters is dropped.
const meta = v.optional(
  v.fallback(
    v.nullable(
      v.pipe(
        v.string(),
        v.check((text: string) => !hasHiddenCharacters(text)),
        v.transform((s) => s.slice(0, MAX_META)),
      ),
    ),
    null,
  ),
  null,
);

/** Fields every accept carries in both versions. Expiry members are optional and checked when present. */
const common = {
  scheme: field,
  network: field,
  asset: field,
  payTo: field,
  maxTimeoutSeconds: timeout,
  extra: v.nullish(plainObject),
  validBefore: v.nullish(unixSeconds),
  expiresAt: v.nullish(instant),
};

/** One v2 option (`amount`). */
export const AcceptV2Schema = v.object({ ...common, amount: atomic });

/** One v1 option (`maxAmountRequired`; resource metadata per option). */
export const AcceptV1Schema = v.object({
  ...common,
  maxAmountRequired: atomic,
  resource: meta,
  description: meta,
  mimeType: meta,
});

/** The v2 top level (accepts are checked one by one afterwards, so that paths name the option). */
export const PaymentRequiredV2Schema = v.object({
  x402Version: v.literal(2),
  accepts: v.pipe(v.array(v.unknown()), v.minLength(1, 'no payment options'), v.maxLength(MAX_ACCEPTS)),
  resource: v.optional(
    v.fallback(
      v.nullable(
        v.union([
          v.pipe(
            v.string(),
            v.transform((url) => ({ url: url.slice(0, MAX_META), description: null, mimeType: null })),
          ),
          v.object({ url: meta, description: meta, mimeType: meta }),
        ]),
      ),
      null,
    ),
    null,
  ),
});

/** The v1 top level. */
export const PaymentRequiredV1Schema = v.object({
  x402Version: v.literal(1),
  accepts: v.pipe(v.array(v.unknown()), v.minLength(1, 'no payment options'), v.maxLength(MAX_ACCEPTS)),
});

/** Expiry members allowed inside `extra`; checked like the top-level ones, everything else in `extra` is free. */
export const ExtraExpirySchema = v.object({
  validBefore: v.nullish(unixSeconds),
  expiresAt: v.nullish(instant),
});

/** Unix seconds of a value that passed `unixSeconds` or `instant`. */
export function toUnixSeconds(value: number | string): number | null {
  if (typeof value === 'number') return value;
  if (UNIX_DIGITS.test(value)) return Number(value);
  return isoSeconds(value);
}

function isoSeconds(value: string): number | null {
  const match = ISO_INSTANT.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // Date.parse rolls 2026-02-30 over into March; an impossible date is garbage, not a guess.
  const probe = new Date(Date.UTC(year, month - 1, day));
  if (probe.getUTCFullYear() !== year || probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) {
    return null;
  }
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/** Iterative, so hostile nesting cannot exhaust the stack. */
function depthWithin(root: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  let visited = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (++visited > 100_000) return false;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return false;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return true;
}
