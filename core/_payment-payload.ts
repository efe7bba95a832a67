/**
 * Decoding of the `payment_payload` member of the payment-status input: a v2 `PAYMENT-SIGNATURE` or v1
 * `X-PAYMENT` value (docs/x402.md §2.4) holding an exact EVM (EIP-3009) authorization on Base USDC. Internal to
 * `core/payment-input.ts`.
 *
 * Decision (spec silent): a payload may be standard base64, base64url, wrapped with whitespace, or the bare JSON
 * text.
 */
import * as v from 'valibot';
import {
  type Hex,
  isAddress,
  isBytes32,
  type PaymentInputCode,
  type PaymentTerms,
  UINT,
} from './_payment-input-schemas.ts';
import { decodeBase64Utf8 } from './base64.ts';
import { BASE, BASE_USDC, normalizeNetwork, sameAddress } from './networks.ts';

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
// EOA signatures are 65 bytes; ERC-1271 / ERC-6492 wallets send longer ones (docs/x402.md §8.1, v2.2 overload).
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

/** A decoded exact EIP-3009 payment payload on Base USDC. */
export type DecodedPayload = {
  version: 1 | 2;
  network: string;
  accepted: PaymentTerms;
  authorization: { from: Hex; to: Hex; nonce: Hex; value: bigint; validAfter: bigint; validBefore: bigint };
};

/**
 * Decodes a v2 `PAYMENT-SIGNATURE` or v1 `X-PAYMENT` value (docs/x402.md §2.4) holding an exact EVM (EIP-3009)
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

/** Lenient base64 (standard or url alphabet, any whitespace, padding optional) of UTF-8 JSON; docs/x402.md §9.3. */
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

/** The failure of the payment-status input, with its docs/api.md §7 400 code; the parser answers with it too. */
export function fail(
  code: PaymentInputCode,
  message: string,
): { ok: false; code: PaymentInputCode; message: string } {
  return { ok: false, code, message };
}
