/**
 * JSON parsing for the verifier that refuses an object naming a member twice. RFC 8259 §4 only says names SHOULD
 * be unique and leaves the outcome to each parser: `JSON.parse` keeps the last copy, other parsers the first or
 * refuse. A receipt file with two `verdict` members would verify here (the signature covers the last copy) while a
 * reader taking the first sees another verdict, so the verifier accepts only files every parser reads alike.
 *
 * The text is parsed by `JSON.parse` first, so anything it refuses is refused as before; a scan of the (now known
 * valid) text then looks for a repeated name, compared after unescaping (`"a"` and `"\u0061"` are the same name).
 * No Node-only APIs: this module runs in a browser too.
 */

/** Thrown for valid JSON with a repeated member name; `member` is the name as parsed. */
export class DuplicateMemberError extends Error {
  readonly member: string;
  constructor(member: string) {
    super(`duplicate member ${JSON.stringify(member)} in one object`);
    this.name = 'DuplicateMemberError';
    this.member = member;
  }
}

/**
 * `JSON.parse(text)`, but throws {@link DuplicateMemberError} when any object of `text` names a member twice.
 * @example parseJsonStrict('{"a":1,"a":2}') // throws DuplicateMemberError (member "a")
 */
export function parseJsonStrict(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const repeated = firstRepeatedMember(text);
  if (repeated !== null) throw new DuplicateMemberError(repeated);
  return value;
}

/** The first member name an object of valid JSON `text` repeats, or null. */
function firstRepeatedMember(text: string): string | null {
  // One frame per open object (its names so far) or array (null); `expectName` is true where a name may start.
  const frames: Array<Set<string> | null> = [];
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = endOfString(text, i);
      const names = frames.at(-1);
      if (expectName && names) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (names.has(name)) return name;
        names.add(name);
        expectName = false;
      }
      i = end;
    } else if (c === '{') {
      frames.push(new Set());
      expectName = true;
    } else if (c === '[') {
      frames.push(null);
      expectName = false;
    } else if (c === '}' || c === ']') {
      frames.pop();
      expectName = false;
    } else if (c === ',') {
      expectName = frames.at(-1) instanceof Set;
    }
  }
  return null;
}

/** The index of the quote closing the string that opens at `start` (valid JSON: it exists). */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}
