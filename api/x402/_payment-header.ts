/**
 * Decoding a buyer's payment header (`PAYMENT-SIGNATURE` or `X-PAYMENT`, docs/api.md §5.2) through valibot.
 *
 * The header is hostile input: it is size-capped, base64-decoded, JSON-parsed and schema-checked here, and the
 * rest of the seller only sees the typed result. Unknown members are kept (`looseObject`) because the SDK
 * compares `accepted` with the advertised requirements member by member, and a stripped member could turn a
 * mismatch into a match.
 */
import type { PaymentPayload } from '@x402/core/types';
import * as v from 'valibot';

/** Base64 of a payload with a bazaar echo is a few KB; anything near Node's 16 KB header limit is refused. */
const MAX_HEADER_CHARS = 16_384;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** CAIP-2 (`eip155:8453`): the SDK's `Network` template type. */
const NetworkSchema = v.custom<`${string}:${string}`>(
  (input) => typeof input === 'string' && /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(input),
  'network must be CAIP-2',
);

const RequirementsSchema = v.looseObject({
  scheme: v.string(),
  network: NetworkSchema,
  asset: v.string(),
  amount: v.string(),
  payTo: v.string(),
  maxTimeoutSeconds: v.number(),
  extra: v.record(v.string(), v.unknown()),
});

const ResourceSchema = v.looseObject({
  url: v.string(),
  description: v.exactOptional(v.string()),
  mimeType: v.exactOptional(v.string()),
});

const PayloadV2Schema = v.looseObject({
  x402Version: v.literal(2),
  accepted: RequirementsSchema,
  payload: v.record(v.string(), v.unknown()),
  resource: v.exactOptional(ResourceSchema),
  extensions: v.exactOptional(v.record(v.string(), v.unknown())),
});

const PayloadV1Schema = v.looseObject({
  x402Version: v.literal(1),
  scheme: v.string(),
  network: v.string(),
  payload: v.record(v.string(), v.unknown()),
});

/** A v1 payment payload. The SDK's `PaymentPayloadV1` types `network` as CAIP-2, but v1 sends names (`base`). */
export type PayloadV1 = v.InferOutput<typeof PayloadV1Schema>;

/** The EIP-3009 authorization of the exact EVM scheme (docs/x402.md §2.4); only what the replay guard needs. */
const AuthorizationSchema = v.looseObject({
  from: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/)),
  nonce: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/)),
  validBefore: v.pipe(v.string(), v.regex(/^\d{1,20}$/)),
});
const ExactPayloadSchema = v.looseObject({ authorization: AuthorizationSchema });

/** A decoded payment header: the payload, and the key that identifies the one payment it authorizes. */
export type DecodedPayment = (
  | { version: 2; payload: PaymentPayload }
  | { version: 1; payload: PayloadV1 }
) & {
  /** `from:nonce` (lower-case) for EIP-3009 payloads; otherwise the header text itself. */
  key: string;
  /** Unix seconds after which the authorization can never settle; null when the payload does not say. */
  validBefore: number | null;
  /** The signer the payload names, when it names one. */
  from: string | null;
  /** The EIP-3009 authorization's nonce (lower-case hex), when the payload carries one. */
  nonce: string | null;
};

/** Decodes a payment header value; null when it is not base64 JSON of a v1 or v2 payment payload. */
export function decodePaymentHeader(header: string): DecodedPayment | null {
  const text = header.trim();
  if (text.length === 0 || text.length > MAX_HEADER_CHARS || !BASE64.test(text)) return null;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  const auth = authorizationOf(json);
  const identity = {
    key: auth ? `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}` : `header:${text}`,
    validBefore: auth ? Number(auth.validBefore) : null,
    from: auth?.from ?? null,
    nonce: auth?.nonce.toLowerCase() ?? null,
  };
  const v2 = v.safeParse(PayloadV2Schema, json);
  if (v2.success) return { version: 2, payload: v2.output, ...identity };
  const v1 = v.safeParse(PayloadV1Schema, json);
  if (v1.success) return { version: 1, payload: v1.output, ...identity };
  return null;
}

function authorizationOf(json: unknown): v.InferOutput<typeof AuthorizationSchema> | null {
  if (typeof json !== 'object' || json === null || !('payload' in json)) return null;
  const parsed = v.safeParse(ExactPayloadSchema, json.payload);
  return parsed.success ? parsed.output.authorization : null;
}
