import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalJson } from '../../../core/jcs.ts';

const VECTORS = join(import.meta.dirname, '../../vectors/rfc8785');
const read = (path: string) => readFileSync(join(VECTORS, path), 'utf8');

describe('canonicalJson: RFC 8785 vectors (cyberphone/json-canonicalization testdata)', () => {
  const names = readdirSync(join(VECTORS, 'output')).filter((n) => n.endsWith('.json'));

  it('has the vendored vector pairs', () => {
    expect(names.sort()).toEqual([
      'french.json',
      'simpleString.json',
      'structures.json',
      'unicode.json',
      'values.json',
      'weird.json',
    ]);
  });

  it.each(names)('canonicalizes input/%s to exactly output/%s', (name) => {
    const input: unknown = JSON.parse(read(`input/${name}`));
    expect(canonicalJson(input), `vector ${name}`).toBe(read(`output/${name}`));
  });

  it('canonicalizes input/arrays.json (§3.2.3: keys sorted by UTF-16 code units, "1" < "10" < "d")', () => {
    expect(canonicalJson(JSON.parse(read('input/arrays.json')))).toBe('[56,{"1":[],"10":null,"d":true}]');
  });

  it('weird.json sorts by UTF-16 code units, not code points (§3.2.3): U+1F602 before U+FB33', () => {
    const out = canonicalJson(JSON.parse(read('input/weird.json')));
    expect(out.indexOf('\u{1F602}')).toBeLessThan(out.indexOf('\uFB33'));
  });

  it('canonicalBytes is the UTF-8 encoding of the canonical text (§3.2.4)', () => {
    const bytes = canonicalBytes(JSON.parse(read('input/french.json')));
    expect(Buffer.from(bytes).equals(readFileSync(join(VECTORS, 'output/french.json')))).toBe(true);
  });
});

describe('canonicalJson: RFC 8785 Appendix B number serialization', () => {
  const rows = JSON.parse(read('appendix-b-numbers.json')) as [string, string | null, string][];

  it.each(rows)('IEEE 754 %s → %s', (hex, expected) => {
    const value = Buffer.from(hex, 'hex').readDoubleBE(0);
    if (expected === null) {
      expect(() => canonicalJson([value]), `vector ${hex}`).toThrow(TypeError);
    } else {
      expect(canonicalJson([value]), `vector ${hex}`).toBe(`[${expected}]`);
    }
  });
});

describe('canonicalJson: I-JSON rejections (RFC 8785 §3.1, RFC 7493)', () => {
  it.each([
    ['a lone high surrogate', { a: '\uD800' }, '$.a'],
    ['a lone low surrogate in an array', ['ok', 'x\uDC00'], '$[1]'],
    ['a lone surrogate in a key', { ['k\uD83D']: 1 }, '$.k\uD83D'],
    ['NaN', { n: Number.NaN }, '$.n'],
    ['Infinity', { deep: { list: [1, Number.POSITIVE_INFINITY] } }, '$.deep.list[1]'],
    ['-Infinity', [Number.NEGATIVE_INFINITY], '$[0]'],
    ['a bigint', { amount: 10n }, '$.amount'],
    ['a function', { f: () => 1 }, '$.f'],
    ['a symbol', { s: Symbol('x') }, '$.s'],
    ['undefined in an array', [1, undefined], '$[1]'],
    ['a Date', { at: new Date(0) }, '$.at'],
    ['a Map', { m: new Map() }, '$.m'],
  ])('rejects %s with a TypeError naming the path', (_what, value, path) => {
    expect(() => canonicalJson(value)).toThrow(TypeError);
    expect(() => canonicalJson(value)).toThrow(`${path} is`);
  });

  it('rejects a cycle', () => {
    const a: Record<string, unknown> = {};
    a['self'] = a;
    expect(() => canonicalJson(a)).toThrow('$.self is a circular reference');
  });

  it('accepts well-formed astral characters, -0, shared (non-cyclic) references and null prototypes', () => {
    const shared = { x: 1 };
    const bare = Object.assign(Object.create(null) as object, { b: 2, a: 1 });
    expect(canonicalJson({ e: '\u{1F602}', z: -0, p: shared, q: shared, n: bare })).toBe(
      '{"e":"😂","n":{"a":1,"b":2},"p":{"x":1},"q":{"x":1},"z":0}',
    );
  });

  it('drops undefined object members (docs/api.md §2.6)', () => {
    expect(canonicalJson({ b: undefined, a: 1 })).toBe('{"a":1}');
  });
});
