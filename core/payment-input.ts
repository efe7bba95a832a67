/**
 * Input of the payment-status check (docs/api.md §4 `payment-status`, §7 400 codes): the JSON body of a POST or the
 * query of a GET, validated and reduced to one {@link PaymentStatusQuery}.
 *
 * Decisions (spec silent): an unknown member is ignored; `null` and `''` count as absent (an empty query
 * parameter is what forms send for "not given"); a payload may be standard base64, base64url, wrapped with
 * whitespace, or the bare JSON text; `nonce` without `from` is accepted only next to a payload that supplies
 * `from`, and must then match it.
 *
 * The valibot schemas are in `_payment-input-schemas.ts`, the payload decoding in `_payment-payload.ts`.
 */
import type * as v from 'valibot';
import {
  type Hex,
  isAddress,
  isBytes32,
  PAYMENT_INPUT_CODES,
  type PaymentInputCode,
  PaymentStatusInputSchema,
  type PaymentTerms,
  type TermsSchema,
} from './_payment-input-schemas.ts';
import { type DecodedPayload, decodePayload, fail } from './_payment-payload.ts';
import { parseInput } from './input-codes.ts';
import { BASE, BASE_USDC, normalizeNetwork, sameAddress } from './networks.ts';
import { parseTargetUrl } from './url.ts';

// The schemas and the payload decoder live beside this module; its importers keep reaching them here.
export {
  type Hex,
  MAX_PAYLOAD_LENGTH,
  PAYMENT_INPUT_CODES,
  type PaymentInputCode,
  PaymentStatusInputSchema,
  type PaymentTerms,
} from './_payment-input-schemas.ts';
export { type DecodedPayload, decodePayload } from './_payment-payload.ts';

/** A validated payment-status request; every address and hash is exactly as sent (case kept). */
export type PaymentStatusQuery = {
  from: Hex | null;
  nonce: Hex | null;
  validAfter: bigint | null;
  validBefore: bigint | null;
  value: bigint | null;
  to: Hex | null;
  txHash: Hex | null;
  sellerUrl: string | null;
  /** The caller's `terms` member. */
  terms: PaymentTerms | null;
  /** The v2 payload's `accepted` requirements (v1: network only), the default expectation of `terms_match`. */
  accepted: PaymentTerms | null;
  /** What the authorization is identified by: the payload first, then `from`+`nonce`, then `tx_hash`. */
  source: 'payment_payload' | 'from_nonce' | 'tx_hash';
  payloadVersion: 1 | 2 | null;
  client: string | null;
  ref: string | null;
};

/** The parsed query, or the 400 code and message the route answers with. */
export type PaymentInputResult =
  | { ok: true; value: PaymentStatusQuery }
  | { ok: false; code: PaymentInputCode; message: string };

/**
 * True when the request names nothing Spotcheck knows: no body or query, or only unknown or empty members. The
 * route answers such a request 402 with the payment requirement (docs/api.md §4: "A bare request … answers 402").
 *
 * @example isBareRequest({}) // true; isBareRequest({ tx_hash: '' }) // true; isBareRequest({ client: 'a' }) // false
 */
export function isBareRequest(raw: unknown): boolean {
  if (raw === undefined || raw === null) return true;
  if (typeof raw !== 'object' || Array.isArray(raw)) return false;
  const known = new Set(Object.keys(PaymentStatusInputSchema.entries));
  return Object.entries(raw).every(([name, value]) => !known.has(name) || isAbsent(value));
}

/**
 * Validates a payment-status request (POST body or GET query) into a query, or a docs/api.md §7 400 code.
 *
 * @example parsePaymentStatusInput({ tx_hash: '0x' + 'ab'.repeat(32) }) // { ok: true, value: { source: 'tx_hash', … } }
 */
export function parsePaymentStatusInput(raw: unknown): PaymentInputResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return fail('bad_body', 'the body must be a JSON object');
  // The published schema carries each member's code (bad_body, bad_client, bad_ref, bad_terms).
  const parsed = parseInput(PaymentStatusInputSchema, withoutAbsentMembers(raw));
  if (!parsed.ok) return fail(inputCode(parsed.code), parsed.message);
  const body = parsed.value;
  const labels = labelsOf(body);
  const payload = payloadOf(body);
  if (!payload.ok) return payload;
  const reference = referenceOf(body, payload.value);
  if (!reference.ok) return reference;
  let sellerUrl: string | null = null;
  if (body.seller_url != null) {
    const url = parseTargetUrl(body.seller_url);
    if (!url.ok) return fail('bad_seller_url', `seller_url: ${url.message}`);
    // The URL as probed and named in the receipt (see parseTargetUrl), not the text as sent.
    sellerUrl = url.url.href;
  }
  return { ok: true, value: queryOf(payload.value, reference.value, labels, sellerUrl) };
}

type Body = v.InferOutput<typeof PaymentStatusInputSchema>;
type Failure = Extract<PaymentInputResult, { ok: false }>;
type Step<T> = { ok: true; value: T } | Failure;
type Labels = { client: string | null; ref: string | null; terms: PaymentTerms | null };
type Reference = { from: Hex | null; nonce: Hex | null; txHash: Hex | null; validBefore: bigint | null };

/** The members that label the request and state its terms. */
function labelsOf(body: Body): Labels {
  return {
    client: body.client ?? null,
    ref: body.ref ?? null,
    terms: body.terms == null ? null : termsOf(body.terms),
  };
}

/** The network and asset the caller names, then the decoded payment payload (null when none was sent). */
function payloadOf(body: Body): Step<DecodedPayload | null> {
  // Explicit network and asset first: they say what the caller believes, whatever else is wrong (docs/api.md §5.3).
  if (body.network != null && normalizeNetwork(body.network) !== BASE) {
    return fail('unsupported_network', 'only Base (eip155:8453) authorizations can be checked');
  }
  if (body.asset != null && !sameAddress(body.asset, BASE_USDC)) {
    return fail('unsupported_asset', 'only the canonical USDC of Base can be checked');
  }
  if (body.payment_payload == null) return { ok: true, value: null };
  const decoded = decodePayload(body.payment_payload);
  if (!decoded.ok) return decoded;
  if (body.network != null && normalizeNetwork(body.network) !== decoded.value.network) {
    return fail('inconsistent', 'network differs from the payment payload');
  }
  return decoded;
}

/** What identifies the authorization besides the payload, each member well formed and agreeing with it. */
function referenceOf(body: Body, payload: DecodedPayload | null): Step<Reference> {
  const from = body.from ?? null;
  if (from !== null && !isAddress(from)) return fail('bad_from', 'from must be 0x followed by 40 hex digits');
  const nonce = body.nonce ?? null;
  if (nonce !== null && !isBytes32(nonce))
    return fail('bad_nonce', 'nonce must be 0x followed by 64 hex digits');
  const txHash = body.tx_hash ?? null;
  if (txHash !== null && !isBytes32(txHash))
    return fail('bad_tx_hash', 'tx_hash must be 0x followed by 64 hex digits');
  if (nonce !== null && from === null && payload === null)
    return fail('inconsistent', 'nonce was sent without from');
  const validBefore = body.valid_before == null ? null : BigInt(body.valid_before);
  if (payload !== null) {
    const auth = payload.authorization;
    if (from !== null && !sameAddress(from, auth.from))
      return fail('inconsistent', 'from differs from the payment payload');
    if (nonce !== null && nonce.toLowerCase() !== auth.nonce.toLowerCase()) {
      return fail('inconsistent', 'nonce differs from the payment payload');
    }
    if (validBefore !== null && validBefore !== auth.validBefore) {
      return fail('inconsistent', 'valid_before differs from the payment payload');
    }
  } else if (txHash === null && (from === null || nonce === null)) {
    return fail('missing_reference', 'send payment_payload, tx_hash, or from with nonce');
  }
  return { ok: true, value: { from, nonce, txHash, validBefore } };
}

/** The query: the payload's authorization first, then `from`+`nonce`, then `tx_hash`. */
function queryOf(
  payload: DecodedPayload | null,
  reference: Reference,
  labels: Labels,
  sellerUrl: string | null,
): PaymentStatusQuery {
  const { from, nonce, txHash, validBefore } = reference;
  const hasPair = from !== null && nonce !== null;
  return {
    from: payload?.authorization.from ?? (hasPair ? from : null),
    nonce: payload?.authorization.nonce ?? (hasPair ? nonce : null),
    validAfter: payload?.authorization.validAfter ?? null,
    validBefore: payload?.authorization.validBefore ?? validBefore,
    value: payload?.authorization.value ?? null,
    to: payload?.authorization.to ?? null,
    txHash,
    sellerUrl,
    terms: labels.terms,
    accepted: payload?.accepted ?? null,
    source: payload ? 'payment_payload' : hasPair ? 'from_nonce' : 'tx_hash',
    payloadVersion: payload?.version ?? null,
    client: labels.client,
    ref: labels.ref,
  };
}

function termsOf(terms: v.InferOutput<typeof TermsSchema>): PaymentTerms {
  return {
    amount: terms.amount ?? null,
    payTo: terms.payTo ?? null,
    asset: terms.asset ?? null,
    network: terms.network == null ? null : normalizeNetwork(terms.network),
  };
}

/** The request without its absent members, `terms` included. */
function withoutAbsentMembers(raw: object): unknown {
  const members = Object.fromEntries(Object.entries(raw).filter(([, member]) => !isAbsent(member)));
  return 'terms' in members ? { ...members, terms: withoutAbsent(members.terms) } : members;
}

/** A code the schema carries, as one of {@link PAYMENT_INPUT_CODES}. */
function inputCode(code: string): PaymentInputCode {
  return PAYMENT_INPUT_CODES.find((known) => known === code) ?? 'bad_body';
}

/** A plain object without its absent (`null`, `''`) members; anything else as it is. */
function withoutAbsent(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, member]) => !isAbsent(member)));
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}
