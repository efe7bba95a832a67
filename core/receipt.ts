/**
 * Receipts (docs/api.md §2.6): public ids, the signing input, signing through an injected signer, badge snippets.
 * Pure: randomness and the Ed25519 key come in as parameters (the key lives in `io/keys.ts`).
 */
import { escapeXml } from './format.ts';
import { canonicalBytes, canonicalJson } from './jcs.ts';

/** Id prefixes: `sc-` for checks, `ps-` for payment-status receipts (docs/api.md §2.6). */
export type ReceiptIdPrefix = 'sc-' | 'ps-';

/** Signs bytes with Ed25519 (a 64-byte signature); `kid` names the public key in the JWKS. */
export type Signer = { kid: string; sign(bytes: Uint8Array): Uint8Array };

/** The members a signature adds to a receipt. */
export type SignatureFields = { kid: string; signature: string };

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'; // RFC 4648 §6 alphabet, lower-cased
const ID_RANDOM_BYTES = 16; // 128 bits: collisions are not a concern at any crawl or request volume
// 128 bits make 26 base32 digits; the last digit carries 3 bits and 2 zero padding bits, so only every
// fourth letter can end a canonical id. The regex accepts exactly the ids `newReceiptId` can produce.
const RECEIPT_ID = /^(?:sc|ps)-[a-z2-7]{25}[aeimquy4]$/;

/**
 * A new public receipt id: the prefix and 128 random bits in lower-case, unpadded base32 (26 characters).
 * @example newReceiptId('sc-', (n) => crypto.getRandomValues(new Uint8Array(n))) // 'sc-k3q…' (29 chars)
 */
export function newReceiptId(prefix: ReceiptIdPrefix, random: (n: number) => Uint8Array): string {
  const bytes = random(ID_RANDOM_BYTES);
  if (bytes.length !== ID_RANDOM_BYTES) {
    throw new RangeError(`newReceiptId: random(${ID_RANDOM_BYTES}) returned ${bytes.length} bytes`);
  }
  return prefix + base32(bytes);
}

/**
 * The public URL of a receipt (`GET /v1/receipts/{id}`, docs/api.md §2.6): the one template for answers, receipts,
 * listings and the site.
 * @example receiptUrlOf('https://s.example', 'sc-k3q…') // 'https://s.example/v1/receipts/sc-k3q…'
 */
export function receiptUrlOf(baseUrl: string, id: string): string {
  return `${baseUrl}/v1/receipts/${id}`;
}

/**
 * True for a well-formed receipt id (`sc-`/`ps-` and 26 canonical base32 digits). Safe to use as a file
 * name: no dots, slashes or upper case.
 * @example isReceiptId('sc-aaaaaaaaaaaaaaaaaaaaaaaaaa') // true
 */
export function isReceiptId(value: unknown): value is string {
  return typeof value === 'string' && RECEIPT_ID.test(value);
}

/**
 * The bytes a receipt's signature covers: RFC 8785 canonical JSON of the receipt with only `signature`
 * removed (`kid` stays in, so the key choice is signed too). Auditors recompute exactly this.
 * @example signingInput({ id: 'sc-…', kid: 'k', signature: 's' }) // bytes of '{"id":"sc-…","kid":"k"}'
 */
export function signingInput(receipt: object): Uint8Array {
  const { signature: _omitted, ...rest } = receipt as Record<string, unknown>;
  return canonicalBytes(rest);
}

/**
 * Adds `kid` and an Ed25519 `signature` (base64url, no padding, docs/api.md §2.6) to a receipt. A `signature`
 * already present in `unsigned` is replaced, never signed over.
 * @example signReceipt({ id: 'sc-…', verdict: 'pay' }, signer) // { id, verdict, kid, signature }
 */
export function signReceipt<T extends object>(unsigned: T, signer: Signer): T & SignatureFields {
  return signReceiptJson(unsigned, signer).receipt;
}

/** A signed receipt and its JSON text. */
export type SignedReceipt<T> = { receipt: T & SignatureFields; json: string };

const UTF8 = new TextEncoder();

/**
 * {@link signReceipt}, serializing once: `json` is the signed bytes (RFC 8785 text of the receipt without its
 * signature) with the `signature` member appended before the closing brace. It parses to `receipt`, and removing
 * that last member gives back exactly what an auditor recomputes, so the same text serves as journal record,
 * receipt file and answer.
 * @example signReceiptJson({ id: 'sc-…' }, signer).json // '{"id":"sc-…","kid":"k1","signature":"…"}'
 */
export function signReceiptJson<T extends object>(unsigned: T, signer: Signer): SignedReceipt<T> {
  const withKid = receiptWithKid(unsigned, signer.kid);
  return signCanonical(withKid, canonicalJson(withKid), signer);
}

/**
 * The members a signature covers: the receipt with its `kid`, without any stale `signature`. Its
 * {@link canonicalJson} is what {@link signCanonical} signs.
 * @example canonicalJson(receiptWithKid(unsigned, signer.kid))
 */
export function receiptWithKid<T extends object>(unsigned: T, kid: string): T & { kid: string } {
  const { signature: _stale, ...rest } = unsigned as Record<string, unknown>;
  return { ...rest, kid } as T & { kid: string };
}

/**
 * A signed receipt's text as the service writes its file and answers it: the RFC 8785 text of every member but
 * `signature`, with the `signature` member appended last, as {@link signReceiptJson} makes it. The members of
 * `receipt` may come in any order (a receipt parsed back from a store), the text is the same.
 * Throws a `TypeError` when `receipt` has no string `signature` or no other member.
 * @example signedReceiptText({ signature: 's', id: 'sc-…', kid: 'k1' }) // '{"id":"sc-…","kid":"k1","signature":"s"}'
 */
export function signedReceiptText(receipt: Record<string, unknown>): string {
  const { signature, ...signed } = receipt;
  if (typeof signature !== 'string') throw new TypeError('signedReceiptText: the receipt has no signature');
  const text = canonicalJson(signed);
  if (text === '{}') throw new TypeError('signedReceiptText: the receipt has no signed member');
  return `${text.slice(0, -1)},"signature":${JSON.stringify(signature)}}`;
}

/**
 * {@link signReceiptJson} for a receipt canonicalized already (the crawl does it on its assembly thread): `text`
 * must be `canonicalJson(withKid)`, which is not recomputed here, and `withKid.kid` the signer's.
 */
export function signCanonical<T extends object>(
  withKid: T & { kid: string },
  text: string,
  signer: Signer,
): SignedReceipt<T> {
  if (withKid.kid !== signer.kid) throw new RangeError('signCanonical: the receipt names another key');
  const signature = signer.sign(UTF8.encode(text));
  if (signature.length !== 64) {
    throw new RangeError(`signReceipt: signer returned ${signature.length} bytes, Ed25519 gives 64`);
  }
  const encoded = base64url(signature);
  return {
    receipt: { ...withKid, signature: encoded } as unknown as T & SignatureFields,
    json: `${text.slice(0, -1)},"signature":"${encoded}"}`,
  };
}

/** Inputs of {@link badgeSnippets}. */
export type BadgeInput = { baseUrl: string; host: string; receiptUrl: string; verdict: string };

/**
 * Markdown and HTML that show the host's status badge and link to the receipt (docs/api.md §2.6, §3.3).
 * URLs must be http(s); every value is escaped for its context (URL path, Markdown, HTML attribute).
 * @example badgeSnippets({ baseUrl: 'https://s.example', host: 'api.example', receiptUrl: 'https://s.example/r/sc-…', verdict: 'pay' })
 */
export function badgeSnippets(input: BadgeInput): { markdown: string; html: string } {
  const base = httpUrl(input.baseUrl, 'baseUrl').replace(/\/+$/, '');
  const receiptUrl = httpUrl(input.receiptUrl, 'receiptUrl');
  const imageUrl = `${base}/badge/${encodeHost(input.host)}.svg`;
  const alt = `Spotcheck: ${input.verdict}`;
  const markdown = `[![${markdownText(alt)}](${markdownUrl(imageUrl)})](${markdownUrl(receiptUrl)})`;
  const html = `<a href="${escapeXml(receiptUrl)}"><img src="${escapeXml(imageUrl)}" alt="${escapeXml(alt)}"></a>`;
  return { markdown, html };
}

/** Lower-case RFC 4648 base32 without padding. */
function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** RFC 4648 §5 base64url without padding (written here because core/ may not use `Buffer`). */
export function base64url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let c = 0; c < chars; c++) out += B64URL[(n >> (18 - 6 * c)) & 63];
  }
  return out;
}

function httpUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`badgeSnippets: ${name} is not a URL`);
  }
  // A javascript: or data: link inside a snippet people paste into READMEs would be an injection.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`badgeSnippets: ${name} must be http(s)`);
  }
  return value;
}

/** Percent-encodes everything but the characters a normalized host (and port) is made of. */
function encodeHost(host: string): string {
  return host.replace(/[^A-Za-z0-9.\-_:]/g, (ch) => encodeURIComponent(ch));
}

function markdownText(text: string): string {
  return text.replace(/[\\[\]*_`<>]/g, (ch) => `\\${ch}`);
}

// encodeURIComponent leaves parentheses alone, but they end a Markdown link target.
const MARKDOWN_URL_ESCAPES: Record<string, string> = { '(': '%28', ')': '%29' };

function markdownUrl(url: string): string {
  return url.replace(/[()<>\s]/g, (ch) => MARKDOWN_URL_ESCAPES[ch] ?? encodeURIComponent(ch));
}
