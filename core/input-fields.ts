/**
 * Request fields, one valibot schema each, shared by the routes' parsers (`api/params.ts`,
 * `core/lookup-params.ts`, `core/payment-input.ts`) and by what the service publishes about them (the
 * `/openapi.json` parameters and the MCP tools' input schemas, `core/request-schemas.ts`): what is documented is
 * what is checked. The input schemas carry each field's stable error code (`core/input-codes.ts`). Caller labels
 * (`client`, `ref`) are `LabelSchema` of `core/text.ts`.
 */
import * as v from 'valibot';
import { parseUsd } from './amount.ts';
import { isNetworkId } from './networks.ts';
import { MAX_URL_LENGTH } from './url.ts';

/** A task name as `GET /v1/tasks` lists them. */
export const TaskNameField = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/));

/** An EVM wallet: 0x and 40 hex digits. */
export const EvmAddressField = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/));

/** A wallet the caller expects to pay: an EVM address or a Solana (base58) public key. */
export const PayToField = v.union([
  EvmAddressField,
  v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)),
]);

/** A CAIP-2 network id, or a v1 network name that maps to one (`base`). */
export const NetworkField = v.pipe(v.string(), v.check(isNetworkId));

/** A service id as `serviceIdOf` (`core/catalog.ts`) writes it: host (and port) then an optional path and query. */
export const ServiceIdField = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.regex(/^[a-z0-9.-]+(?::\d{1,5})?(?:[/?][\x21-\x7e]*)?$/),
);

/** A public http(s) URL; `core/url.ts` `parseTargetUrl` decides the rest (scheme, host, userinfo). */
export const TargetUrlField = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_URL_LENGTH));

/**
 * A USD amount (a JSON number or decimal text), kept as exact canonical text (`core/amount.ts` compares it with
 * atomic units without floats). Above a million dollars a call is a typo, not a budget.
 */
export const UsdAmountField = v.pipe(
  v.union([v.pipe(v.number(), v.finite(), v.transform(String)), v.string()]),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const usd = parseUsd(dataset.value);
    if (usd === null || Number(usd) > 1_000_000) {
      addIssue({ message: 'a non-negative USD amount' });
      return NEVER;
    }
    return usd;
  }),
);

/**
 * A whole number from `min` to `max`, as a JSON number or as decimal text (query strings). The range is checked
 * inside each branch so the published JSON Schema states it for both forms.
 */
export function wholeNumberField(min: number, max: number) {
  const digits = String(max).length;
  return v.union([
    v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max)),
    v.pipe(
      v.string(),
      v.regex(new RegExp(`^\\d{1,${digits}}$`)),
      v.transform(Number),
      v.integer(),
      v.minValue(min),
      v.maxValue(max),
    ),
  ]);
}

/** `skew_s` of the expiry check (docs/api.md §8: 0 to 300 seconds). */
export const SkewSecondsField = wholeNumberField(0, 300);

/** Lookup `n` and `limit` (docs/api.md §8: 1 to 20). */
export const LookupCountField = wholeNumberField(1, 20);
