/**
 * valibot schemas of the payment-status input (docs/api.md §4 `payment-status`): the hex and integer forms, the body or
 * query members, `terms`, and the input schema published from them. Internal to `core/payment-input.ts`, whose
 * parser applies them (and to `core/_payment-payload.ts`, which shares the hex forms).
 */
import * as v from 'valibot';
import { isEvmAddress } from './address.ts';
import { isAtomic } from './amount.ts';
import { coded } from './input-codes.ts';
import { isNetworkId } from './networks.ts';
import { LABEL_RULE, LabelSchema } from './text.ts';

/** A hex string as sent: an address, a nonce or a transaction hash (case kept). */
export type Hex = `0x${string}`;

/** Payment terms as the caller states them (`terms`) or as a payload's `accepted` block carries them. */
export type PaymentTerms = {
  amount: string | null;
  payTo: string | null;
  asset: string | null;
  network: string | null;
};

/** Stable 400 codes of docs/api.md §7; never rename one. */
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
  // The check's label codes, and terms that are not an address, a network and an atomic amount.
  'bad_client',
  'bad_ref',
  'bad_terms',
] as const;
/** One of the stable 400 codes of {@link PAYMENT_INPUT_CODES}. */
export type PaymentInputCode = (typeof PAYMENT_INPUT_CODES)[number];

/** Longest `payment_payload` accepted, in characters (a PAYMENT-SIGNATURE header is a few KB). */
export const MAX_PAYLOAD_LENGTH = 16_384;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
/** An unsigned integer in decimal digits, at most 78 of them (2^256 - 1 has 78). */
export const UINT = /^\d{1,78}$/;

/** An EVM address as sent, any case (`from`, `to`); 0x and 40 hex digits. */
export function isAddress(value: string): value is Hex {
  return ADDRESS.test(value);
}

/** A 32-byte value as sent (`nonce`, `tx_hash`); 0x and 64 hex digits. */
export function isBytes32(value: string): value is Hex {
  return BYTES32.test(value);
}

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
/** The caller's `terms` member, checked with its own code (`bad_terms`). */
export const TermsSchema = v.object({
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
/** The members whose failure is `bad_body`: text of bounded length, and the deadline. */
const entries = {
  payment_payload: Text(MAX_PAYLOAD_LENGTH),
  tx_hash: Text(200),
  from: Text(200),
  nonce: Text(200),
  valid_before: v.optional(v.nullable(Atomic)),
  seller_url: Text(4096),
  network: Text(200),
  asset: Text(200),
};

const about = <T extends v.GenericSchema>(schema: T, text: string) => v.pipe(schema, v.description(text));

/** A member whose failure is `bad_body`, named by its path. */
const body = <T extends v.GenericSchema>(schema: T, text: string) =>
  about(
    coded(schema, {
      code: 'bad_body',
      message: (issue) => `${v.getDotPath(issue) ?? 'body'}: ${issue.message}`,
    }),
    text,
  );
/** A label: `bad_client` or `bad_ref`. */
const label = (name: 'client' | 'ref', text: string) =>
  about(
    coded(v.optional(LabelSchema), { code: `bad_${name}`, message: `${name} must be ${LABEL_RULE}` }),
    text,
  );

/**
 * The request members (POST body or GET query, docs/api.md §4) as published: the route's and the MCP tool's input
 * schema (`core/request-schemas.ts`), and what `parsePaymentStatusInput` parses with (after reading `null` and `''`
 * as absent). Each member carries its 400 code; the `bad_body` members are checked first, then the labels, then
 * `terms`. Every member is optional and unknown members are ignored.
 */
export const PaymentStatusInputSchema = coded(
  v.looseObject({
    payment_payload: body(
      entries.payment_payload,
      'The PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1) header value that was sent: base64 JSON. The best reference: it names payer, nonce, deadline and terms.',
    ),
    tx_hash: body(
      entries.tx_hash,
      'The settlement transaction hash, when the seller returned one (0x and 32 bytes).',
    ),
    from: body(entries.from, 'The payer wallet of the authorization (0x address); send with nonce.'),
    nonce: body(entries.nonce, 'The EIP-3009 authorization nonce, 0x and 32 bytes; send with from.'),
    valid_before: body(
      entries.valid_before,
      'The authorization deadline in unix seconds; needed for safe_to_resign when sending from and nonce without the payload.',
    ),
    seller_url: body(
      entries.seller_url,
      'The URL that was paid: its live 402 gives the terms to compare and a claim contact.',
    ),
    terms: about(
      coded(v.optional(v.nullable(TermsSchema)), (issue) => {
        const where = (issue.path ?? []).slice(1).map((step) => String(step.key));
        return { code: 'bad_terms', message: `${['terms', ...where].join('.')}: ${issue.message}` };
      }),
      'The terms paid against, {amount, payTo, asset, network}, when the seller URL cannot be read.',
    ),
    network: body(entries.network, 'Only eip155:8453 (Base) is supported.'),
    asset: body(entries.asset, 'Only the canonical Base USDC contract is supported.'),
    client: label('client', 'Optional app name, attribution only.'),
    ref: label('ref', 'Optional attribution tag stored on the receipt.'),
  }),
  { code: 'bad_body', message: 'the body must be a JSON object' },
  {
    order: [
      'payment_payload',
      'tx_hash',
      'from',
      'nonce',
      'valid_before',
      'seller_url',
      'network',
      'asset',
      'client',
      'ref',
      'terms',
    ],
  },
);
