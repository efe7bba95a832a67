/**
 * The verifier's JSON parse (`verify/strict-json.ts`): what `JSON.parse` accepts, except an object that names a
 * member twice; names are compared as parsed, so an escaped spelling is the same name.
 */
import { describe, expect, it } from 'vitest';
import { DuplicateMemberError, parseJsonStrict } from '../../../verify/strict-json.ts';

const repeated = (text: string): string | null => {
  try {
    parseJsonStrict(text);
    return null;
  } catch (error) {
    if (error instanceof DuplicateMemberError) return error.member;
    throw error;
  }
};

describe('parseJsonStrict', () => {
  it('parses what JSON.parse parses when no object repeats a name', () => {
    for (const text of [
      '{}',
      '[]',
      '"a"',
      '1e3',
      'null',
      '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
      '{"a":"\\"a\\":1,","b":"{\\"a\\":1,\\"a\\":2}"}',
      '{"a\\\\":1,"a":2}',
      ' { "x" : [ 1 , { "y" : [ ] } ] , "y" : { } } ',
      '{"__proto__":1,"constructor":2}',
    ]) {
      expect(parseJsonStrict(text), text).toEqual(JSON.parse(text));
    }
  });

  it('refuses a repeated name at any depth, however it is spelled', () => {
    expect(repeated('{"a":1,"a":1}')).toBe('a');
    expect(repeated('{"a":1,"\\u0061":2}')).toBe('a');
    expect(repeated('[{"x":{"b":[{"c":1,"c":2}]}}]')).toBe('c');
    expect(repeated('{"o":{},"p":[],"o":null}')).toBe('o');
    expect(repeated('{"":1,"":2}')).toBe('');
    expect(repeated('{"__proto__":1,"__proto__":2}')).toBe('__proto__');
  });

  it('refuses invalid JSON as JSON.parse does', () => {
    for (const text of ['{"a":', '{"a":1,}', "{'a':1}", '\uFEFF{}', '']) {
      expect(() => parseJsonStrict(text), text).toThrow(SyntaxError);
    }
  });
});
