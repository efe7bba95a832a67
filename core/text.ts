/**
 * Text that reaches a signed receipt from outside: what a reader sees must be what was
 * signed. One rule for caller labels on every route, and one test for the characters that hide or reorder text.
 */
import * as v from 'valibot';

/**
 * Characters that are invisible or reorder what is displayed: controls (C0, C1, DEL), format characters
 * (zero-width space and joiners, LRM/RLM, bidi embeddings, overrides and isolates, BOM, soft hyphen), line and
 * paragraph separators, lone surrogates, private use, and the blank letters that render as nothing.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0\u2800]/u;

/**
 * True when `text` holds a character that is invisible or reorders the text around it (see {@link HIDDEN}).
 *
 * @example hasHiddenCharacters('0x11\u200b') // true; hasHiddenCharacters('exact') // false
 */
export function hasHiddenCharacters(text: string): boolean {
  return HIDDEN.test(text);
}

/**
 * True for an identifier a receipt may carry as seen (a network, an asset, a wallet, a scheme): no whitespace and
 * no hidden characters.
 *
 * @example isPlainIdentifier('eip155:8453') // true; isPlainIdentifier('\u202e0x11') // false
 */
export function isPlainIdentifier(text: string): boolean {
  return !/\s/.test(text) && !hasHiddenCharacters(text);
}

/** The label rule, as published in error messages: `client` and `ref` on every route. */
export const LABEL_RULE = '1 to 64 characters of [A-Za-z0-9._:@/+-]';

/**
 * A caller's label (`client`, `ref`): the one rule of the check, the payment status and the lookup. Printable
 * ASCII without spaces, so it cannot hide, reorder or fake text in a receipt.
 */
export const LabelSchema = v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:@/+-]{1,64}$/));
