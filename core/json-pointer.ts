/**
 * RFC 6901 JSON pointers, read over a parsed JSON document: how an answer check addresses one exact field.
 */
/** A JSON value, as `JSON.parse` returns it (an expected value, a POST body, a document a pointer reads). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * RFC 6901: the value at `pointer` in `document`; own members only, array indexes in canonical decimal form.
 * @example resolvePointer({ a: [{ 'b/c': 1 }] }, '/a/0/b~1c') // { ok: true, value: 1 }
 */
export function resolvePointer(
  document: JsonValue,
  pointer: string,
): { ok: true; value: JsonValue } | { ok: false } {
  if (pointer === '') return { ok: true, value: document };
  let at: JsonValue = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d{0,8})$/.test(token)) return { ok: false };
      const next: JsonValue | undefined = at[Number(token)];
      if (next === undefined) return { ok: false };
      at = next;
    } else if (at !== null && typeof at === 'object') {
      if (!Object.hasOwn(at, token)) return { ok: false };
      at = at[token] as JsonValue;
    } else {
      return { ok: false };
    }
  }
  return { ok: true, value: at };
}
