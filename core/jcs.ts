/**
 * RFC 8785 (JCS) canonical JSON: the exact bytes a receipt signature covers (docs/api.md §2.6).
 *
 * Serialization is delegated to the `canonicalize` package; this module first rejects every value that is
 * not I-JSON (RFC 7493) or that `canonicalize`/`JSON.stringify` would silently rewrite, so that what we sign
 * is exactly what an auditor gets back from `JSON.parse` of the published file.
 */
import canonicalize from 'canonicalize';

// A lone surrogate is a code point of category Cs once the string is read by code points (`u` flag):
// paired surrogates combine into one astral code point and never match. RFC 8785 §3.2.2.2, I-JSON §2.1.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The RFC 8785 canonical JSON text of `value`.
 * Throws a `TypeError` naming the path (`$.a[2]`) of the first value outside I-JSON: a lone surrogate in
 * a string or key, a non-finite number, a bigint, a function or symbol, `undefined` inside an array, a
 * cycle, or an object that is not a plain object or array (Date, Map, class instances, `toJSON` holders).
 * `undefined` object members are dropped, as RFC 8785 and `JSON.stringify` do.
 * @example canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  assertIJson(value, [], new Set());
  const text = canonicalize(value);
  // Only a top-level `undefined` reaches here without text; it has no JSON form at all.
  if (text === undefined) throw new TypeError('canonicalJson: $ has no JSON representation (undefined)');
  return text;
}

/**
 * The UTF-8 bytes of {@link canonicalJson}: what is signed and what an auditor recomputes.
 * @example canonicalBytes({ a: 'é' }) // Uint8Array of '{"a":"é"}' in UTF-8
 */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}

/**
 * Walks `value` once. The path of a member is kept as a stack of keys and written out only when a check fails: every
 * receipt is checked on the request path, and building a path string per member cost more than the checks.
 */
function assertIJson(value: unknown, path: Array<string | number>, ancestors: Set<object>): void {
  const type = typeof value;
  if (type === 'string') {
    if (LONE_SURROGATE.test(value as string)) fail(path, 'a string with a lone surrogate');
    return;
  }
  if (type === 'number') {
    if (!Number.isFinite(value)) fail(path, `a non-finite number (${String(value)})`);
    return;
  }
  if (type === 'boolean' || value === null) return;
  // `undefined` is only legal as an object member, where it is dropped before we get here (see below); in an
  // array `JSON.stringify` would turn it into null, which is not what the caller wrote.
  if (type === 'undefined') fail(path, 'undefined');
  if (type === 'bigint') fail(path, 'a bigint (I-JSON numbers are IEEE 754 doubles; send it as a string)');
  if (type === 'function' || type === 'symbol') fail(path, `a ${type}`);
  const obj = value as object;
  if (ancestors.has(obj)) fail(path, 'a circular reference');
  ancestors.add(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) {
      // A hole is skipped, as `forEach` skips it (JSON writes it as null).
      if (!(i in obj)) continue;
      path.push(i);
      assertIJson(obj[i], path, ancestors);
      path.pop();
    }
  } else {
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      fail(
        path,
        `a non-plain object (${(obj as { constructor?: { name?: string } }).constructor?.name ?? '?'})`,
      );
    }
    const record = obj as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      path.push(key);
      if (LONE_SURROGATE.test(key)) fail(path, 'a key with a lone surrogate');
      const member = record[key];
      if (member !== undefined) assertIJson(member, path, ancestors);
      path.pop();
    }
  }
  ancestors.delete(obj);
}

function fail(path: Array<string | number>, what: string): never {
  const shown = path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('');
  throw new TypeError(`canonicalJson: $${shown} is ${what}, which RFC 8785 / I-JSON cannot represent`);
}
