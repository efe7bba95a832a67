/**
 * Input of the payment-status check (spec §4 `payment-status`, §7 400 codes): the JSON body of a POST or the
 * query of a GET, validated and reduced to one {@link PaymentStatusQuery}.
 *
 * Decisions (spec silent): an unknown member is ignored; `null` and `''` count as absent (an empty query
 * parameter is what forms send for "not given"); a payload may be standard base64, base64url, wrapped with
 * whitespace, or the bare JSON text; `nonce` without `from` is accepted only next to a payload that supplies
 * `from`, and must then match it.
 */
import * as v from 'valibot';
import { isEvmAddress } from './address.ts';
import { isAtomic } from './amount.ts';
import { decodeBase64Utf8 } from './base64.ts';
import { BASE, BASE_USDC, isNetworkId, normalizeNetwork, sameAddress } from './networks.ts';
import { LABEL_RULE, LabelSchema } from './text.ts';
import { parseTargetUrl } from './url.ts';

export type Hex = `0x${string}`;

/** Payment terms as the caller states them (`terms`) or as a payload's `accepted` block carries them. */
export type PaymentTerms = {
  amount: string | null;
  payTo: string | null;
  asset: string | null;
  network: string | null;
};

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

/** Stable 400 codes of spec §7; never rename one. */
export const PAYMENT_INPUT_CODES = [
  'missing_reference',
  'bad_payload',
  'bad_from',
  'bad_nonce',
  'bad_tx_hash',
  'inconsistent',
  'unsupported_network',
  'unsupported_asset',
  'bad_seller_url',
  'bad_body',
  // Issue 12 item 9: the check's label codes, and terms that are not an address, a network and an atomic amount.
  'bad_client',
  'bad_ref',
  'bad_terms',
] as const;
export type PaymentInputCode = (typeof PAYMENT_INPUT_CODES)[number];

export type PaymentInputResult =
  | { ok: true; value: PaymentStatusQuery }
  | { ok: false; code: PaymentInputCode; message: string };

/** Longest `payment_payload` accepted, in characters (a PAYMENT-SIGNATURE header is a few KB). */
export const MAX_PAYLOAD_LENGTH = 16_384;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^\d{1,78}$/;

// Well-formed text only: these values go into a signed receipt, whose RFC 8785 bytes cannot hold a lone surrogate.
const Text = (max: number) =>
  v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        v.maxLength(max),
        v.check((text) => !/\p{Cs}/u.test(text)),
      ),
    ),
  );
const Atomic = v.union([
  v.pipe(v.string(), v.regex(UINT)),
  v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
]);
// Terms go into `terms_match` and are compared with an EIP-3009 authorization on Base: an EVM address (EIP-55 when
// mixed case), a network as the check accepts it, and the one atomic-amount rule (core/amount.ts).
const TermsAddress = v.optional(
  v.nullable(
    v.pipe(v.string(), v.check(isEvmAddress, 'must be 0x and 40 hex digits (EIP-55 when mixed case)')),
  ),
);
const TermsSchema = v.object({
  amount: v.optional(
    v.nullable(
      v.pipe(
        v.union([v.string(), v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.transform(String))]),
        v.check(isAtomic, 'must be atomic units: decimal digits without leading zeros, at most 2^256 - 1'),
      ),
    ),
  ),
  payTo: TermsAddress,
  asset: TermsAddress,
  network: v.optional(v.nullable(v.pipe(v.string(), v.check(isNetworkId, 'must be a CAIP-2 network id')))),
});
const BodySchema = v.object({
  payment_payload: Text(MAX_PAYLOAD_LENGTH),
  tx_hash: Text(200),
  from: Text(200),
  nonce: Text(200),
  valid_before: v.optional(v.nullable(Atomic)),
  seller_url: Text(4096),
  // Checked below with their own codes (bad_terms, bad_client, bad_ref).
  terms: v.optional(v.unknown()),
  network: Text(200),
  asset: Text(200),
  client: v.optional(v.unknown()),
  ref: v.optional(v.unknown()),
});

const about = <T extends v.GenericSchema>(schema: T, text: string) => v.pipe(schema, v.description(text));
const { entries } = BodySchema;

/**
 * The request members (POST body or GET query, spec §4) as published: the route's and the MCP tool's input
 * schema (`core/request-schemas.ts`). Built from the very schemas the parser applies (the body members, then
 * `terms` and the labels with their own codes); every member is optional and unknown members are ignored.
 */
export const PaymentStatusInputSchema = v.looseObject({
  payment_payload: about(
    entries.payment_payload,
    'The PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1) header value that was sent: base64 JSON. The best reference: it names payer, nonce, deadline and terms.',
  ),
  tx_hash: about(
    entries.tx_hash,
    'The settlement transaction hash, when the seller returned one (0x and 32 bytes).',
  ),
  from: about(entries.from, 'The payer wallet of the authorization (0x address); send with nonce.'),
  nonce: about(entries.nonce, 'The EIP-3009 authorization nonce, 0x and 32 bytes; send with from.'),
  valid_before: about(
    entries.valid_before,
    'The authorization deadline in unix seconds; needed for safe_to_resign when sending from and nonce without the payload.',
  ),
  seller_url: about(
    entries.seller_url,
    'The URL that was paid: its live 402 gives the terms to compare and a claim contact.',
  ),
  terms: about(
    v.optional(v.nullable(TermsSchema)),
    'The terms paid against, {amount, payTo, asset, network}, when the seller URL cannot be read.',
  ),
  network: about(entries.network, 'Only eip155:8453 (Base) is supported.'),
  asset: about(entries.asset, 'Only the canonical Base USDC contract is supported.'),
  client: about(v.optional(LabelSchema), 'Optional app name, attribution only.'),
  ref: about(v.optional(LabelSchema), 'Optional attribution tag stored on the receipt.'),
});

const AddressSchema = v.custom<Hex>(
  (value) => typeof value === 'string' && isAddress(value),
  'an 0x address',
);
const Bytes32Schema = v.custom<Hex>(
  (value) => typeof value === 'string' && isBytes32(value),
  '0x and 32 bytes',
);
const Authorization = v.object({
  from: AddressSchema,
  to: AddressSchema,
  value: v.pipe(v.string(), v.regex(UINT)),
  validAfter: v.pipe(v.string(), v.regex(UINT)),
  validBefore: v.pipe(v.string(), v.regex(UINT)),
  nonce: Bytes32Schema,
});
// EOA signatures are 65 bytes; ERC-1271 / ERC-6492 wallets send longer ones (x402-notes §8.1, v2.2 overload).
const ExactEvm = v.object({
  authorization: Authorization,
  signature: v.pipe(v.string(), v.regex(/^0x(?:[0-9a-fA-F]{2})+$/)),
});
const PayloadV2 = v.object({
  x402Version: v.literal(2),
  payload: ExactEvm,
  accepted: v.object({
    scheme: v.string(),
    network: v.string(),
    asset: v.string(),
    amount: v.optional(v.string()),
    payTo: v.optional(v.string()),
  }),
});
const PayloadV1 = v.object({
  x402Version: v.literal(1),
  scheme: v.string(),
  network: v.string(),
  payload: ExactEvm,
});
const Payload = v.variant('x402Version', [PayloadV2, PayloadV1]);

/**
 * True when the request names nothing Spotcheck knows: no body or query, or only unknown or empty members. The
 * route answers such a request 402 with the payment requirement (spec §4: "A bare request … answers 402").
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
 * Validates a payment-status request (POST body or GET query) into a query, or a spec §7 400 code.
 *
 * @example parsePaymentStatusInput({ tx_hash: '0x' + 'ab'.repeat(32) }) // { ok: true, value: { source: 'tx_hash', … } }
 */
export function parsePaymentStatusInput(raw: unknown): PaymentInputResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return fail('bad_body', 'the body must be a JSON object');
  const parsed = v.safeParse(BodySchema, withoutAbsent(raw));
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue ? v.getDotPath(issue) : null;
    return fail('bad_body', `${where ?? 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  const body = parsed.output;
  const client = body.client === undefined ? null : v.safeParse(LabelSchema, body.client);
  if (client !== null && !client.success) return fail('bad_client', `client must be ${LABEL_RULE}`);
  const ref = body.ref === undefined ? null : v.safeParse(LabelSchema, body.ref);
  if (ref !== null && !ref.success) return fail('bad_ref', `ref must be ${LABEL_RULE}`);
  const terms = body.terms === undefined ? null : v.safeParse(TermsSchema, withoutAbsent(body.terms));
  if (terms !== null && !terms.success) {
    const issue = terms.issues[0];
    return fail('bad_terms', `terms.${issue ? v.getDotPath(issue) : ''}: ${issue?.message ?? 'invalid'}`);
  }

  // Explicit network and asset first: they say what the caller believes, whatever else is wrong (spec §5.3).
  if (body.network != null && normalizeNetwork(body.network) !== BASE) {
    return fail('unsupported_network', 'only Base (eip155:8453) authorizations can be checked');
  }
  if (body.asset != null && !sameAddress(body.asset, BASE_USDC)) {
    return fail('unsupported_asset', 'only the canonical USDC of Base can be checked');
  }

  let payload: DecodedPayload | null = null;
  if (body.payment_payload != null) {
    const decoded = decodePayload(body.payment_payload);
    if (!decoded.ok) return decoded;
    payload = decoded.value;
    if (body.network != null && normalizeNetwork(body.network) !== payload.network) {
      return fail('inconsistent', 'network differs from the payment payload');
    }
  }

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

  let sellerUrl: string | null = null;
  if (body.seller_url != null) {
    const url = parseTargetUrl(body.seller_url);
    if (!url.ok) return fail('bad_seller_url', `seller_url: ${url.message}`);
    // The URL as probed and named in the receipt (see parseTargetUrl), not the text as sent.
    sellerUrl = url.url.href;
  }

  const hasPair = from !== null && nonce !== null;
  return {
    ok: true,
    value: {
      from: payload?.authorization.from ?? (hasPair ? from : null),
      nonce: payload?.authorization.nonce ?? (hasPair ? nonce : null),
      validAfter: payload?.authorization.validAfter ?? null,
      validBefore: payload?.authorization.validBefore ?? validBefore,
      value: payload?.authorization.value ?? null,
      to: payload?.authorization.to ?? null,
      txHash,
      sellerUrl,
      terms: terms === null ? null : termsOf(terms.output),
      accepted: payload?.accepted ?? null,
      source: payload ? 'payment_payload' : hasPair ? 'from_nonce' : 'tx_hash',
      payloadVersion: payload?.version ?? null,
      client: client === null ? null : client.output,
      ref: ref === null ? null : ref.output,
    },
  };
}

/** A decoded exact EIP-3009 payment payload on Base USDC. */
export type DecodedPayload = {
  version: 1 | 2;
  network: string;
  accepted: PaymentTerms;
  authorization: { from: Hex; to: Hex; nonce: Hex; value: bigint; validAfter: bigint; validBefore: bigint };
};

/**
 * Decodes a v2 `PAYMENT-SIGNATURE` or v1 `X-PAYMENT` value (x402-notes §2.4) holding an exact EVM (EIP-3009)
 * authorization on Base USDC.
 */
export function decodePayload(
  text: string,
): { ok: true; value: DecodedPayload } | { ok: false; code: PaymentInputCode; message: string } {
  const json = decodeJsonText(text);
  if (json === undefined) return fail('bad_payload', 'payment_payload is not base64 of a JSON object');
  const parsed = v.safeParse(Payload, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue ? v.getDotPath(issue) : null;
    return fail(
      'bad_payload',
      `payment_payload is not an exact EIP-3009 payment${where ? ` (${where})` : ''}`,
    );
  }
  const payment = parsed.output;
  const requirement = payment.x402Version === 2 ? payment.accepted : null;
  const scheme = requirement?.scheme ?? (payment.x402Version === 1 ? payment.scheme : '');
  if (scheme !== 'exact') return fail('bad_payload', 'only the exact scheme can be checked');
  const rawNetwork = requirement?.network ?? (payment.x402Version === 1 ? payment.network : '');
  const network = normalizeNetwork(rawNetwork);
  if (network !== BASE)
    return fail('unsupported_network', `the payload is on ${rawNetwork}; only Base is supported`);
  const asset = requirement?.asset ?? null;
  if (asset !== null && !sameAddress(asset, BASE_USDC)) {
    return fail('unsupported_asset', 'the payload is not for the canonical USDC of Base');
  }
  const auth = payment.payload.authorization;
  return {
    ok: true,
    value: {
      version: payment.x402Version,
      network,
      accepted: { amount: requirement?.amount ?? null, payTo: requirement?.payTo ?? null, asset, network },
      authorization: {
        from: auth.from,
        to: auth.to,
        nonce: auth.nonce,
        value: BigInt(auth.value),
        validAfter: BigInt(auth.validAfter),
        validBefore: BigInt(auth.validBefore),
      },
    },
  };
}

/** Lenient base64 (standard or url alphabet, any whitespace, padding optional) of UTF-8 JSON; x402-notes §9.3. */
function decodeJsonText(text: string): unknown {
  const trimmed = text.trim();
  // Some clients paste the decoded JSON itself; it cannot be mistaken for base64, which has no '{'.
  const candidate = trimmed.startsWith('{') ? trimmed : fromBase64(trimmed);
  if (candidate === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(candidate);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function fromBase64(text: string): string | undefined {
  const compact = text.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]+$/.test(compact) || compact.length % 4 === 1) return undefined;
  try {
    return decodeBase64Utf8(compact);
  } catch {
    return undefined;
  }
}

function termsOf(terms: v.InferOutput<typeof TermsSchema>): PaymentTerms {
  return {
    amount: terms.amount ?? null,
    payTo: terms.payTo ?? null,
    asset: terms.asset ?? null,
    network: terms.network == null ? null : normalizeNetwork(terms.network),
  };
}

function isAddress(value: string): value is Hex {
  return ADDRESS.test(value);
}

function isBytes32(value: string): value is Hex {
  return BYTES32.test(value);
}

/** A plain object without its absent (`null`, `''`) members; anything else as it is. */
function withoutAbsent(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, member]) => !isAbsent(member)));
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function fail(
  code: PaymentInputCode,
  message: string,
): { ok: false; code: PaymentInputCode; message: string } {
  return { ok: false, code, message };
}
