/**
 * `core/input-codes.ts`: the 400 code and words of a route's input, carried on the schema it publishes, and what
 * `parseInput` answers with them; carrying them leaves the published JSON Schema as it was.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { coded, parseInput } from '../../../core/input-codes.ts';
import { CheckInputSchema, LookupInputSchema } from '../../../core/request-schemas.ts';

const Name = v.pipe(v.string('name must be text'), v.regex(/^[a-z]+$/, 'lower-case letters only'));
const Input = coded(
  v.looseObject({
    name: coded(Name, { code: 'bad_name' }, { absent: [''] }),
    size: v.optional(
      coded(
        v.picklist(['s', 'm']),
        { code: 'bad_size', message: 'size must be s or m.' },
        { absent: [null, ''] },
      ),
    ),
    box: v.optional(
      coded(v.object({ width: v.number(), depth: v.number() }), (issue) => ({
        code: 'bad_box',
        message: `box.${issue.path
          ?.map((step) => String(step.key))
          .slice(1)
          .join('.')}`,
      })),
    ),
    tag: v.optional(coded(v.string(), { code: 'bad_tag' })),
  }),
  { code: 'bad_body', message: 'not an object' },
  { repeated: 'duplicate_parameter', order: ['tag', 'size'] },
);

describe('parseInput', () => {
  it('should return the output for a good input, unknown members kept', () => {
    expect(parseInput(Input, { name: 'ab', size: 'm', extra: 'kept' })).toEqual({
      ok: true,
      value: { name: 'ab', size: 'm', extra: 'kept' },
    });
  });

  it("should answer a member's code, with its fixed words or the failing issue's own", () => {
    expect(parseInput(Input, { name: 'ab', size: 'xl' })).toEqual({
      ok: false,
      code: 'bad_size',
      message: 'size must be s or m.',
    });
    expect(parseInput(Input, { name: 'AB' })).toEqual({
      ok: false,
      code: 'bad_name',
      message: 'lower-case letters only',
    });
    expect(parseInput(Input, { name: 7 })).toMatchObject({ code: 'bad_name', message: 'name must be text' });
  });

  it('should read the values a member declares absent as not given, and no others', () => {
    expect(parseInput(Input, { name: 'ab', size: null })).toMatchObject({ ok: true });
    expect(parseInput(Input, { name: 'ab', size: '' })).toMatchObject({ ok: true });
    // `name` reads only '' as absent: it is required, so an absent name fails as missing.
    expect(parseInput(Input, { name: '' })).toMatchObject({ code: 'bad_name' });
    expect(parseInput(Input, { name: null })).toMatchObject({
      code: 'bad_name',
      message: 'name must be text',
    });
  });

  it('should answer the rule of the member a nested issue is in', () => {
    expect(parseInput(Input, { name: 'ab', box: { width: 1, depth: 'x' } })).toEqual({
      ok: false,
      code: 'bad_box',
      message: 'box.depth',
    });
  });

  it('should refuse a member given twice before any member is checked', () => {
    expect(parseInput(Input, { name: 'AB', size: ['s', 'm'] })).toEqual({
      ok: false,
      code: 'duplicate_parameter',
      message: 'Parameter size is given more than once.',
    });
  });

  it('should name the first bad member in the order the input declares, then the rest as published', () => {
    const bad = { name: 'AB', size: 'xl', tag: 1 };
    expect(parseInput(Input, bad)).toMatchObject({ code: 'bad_tag' });
    expect(parseInput(Input, { ...bad, tag: 'ok' })).toMatchObject({ code: 'bad_size' });
    expect(parseInput(Input, { ...bad, tag: 'ok', size: 's' })).toMatchObject({ code: 'bad_name' });
  });

  it("should answer the input's own rule for what no member owns", () => {
    expect(parseInput(Input, 'text')).toEqual({ ok: false, code: 'bad_body', message: 'not an object' });
  });

  it('should throw for a schema that carries no rule: a bug of the route, not of the caller', () => {
    expect(() => parseInput(v.object({ a: v.string() }), {})).toThrow(TypeError);
  });
});

describe('coded', () => {
  it('should leave the JSON Schema of what it carries unchanged', () => {
    const plain = v.looseObject({ name: Name, size: v.optional(v.picklist(['s', 'm'])) });
    const carried = coded(
      v.looseObject({
        name: coded(Name, { code: 'bad_name' }),
        size: v.optional(coded(v.picklist(['s', 'm']), { code: 'bad_size' })),
      }),
      { code: 'bad_body' },
    );
    expect(toJsonSchema(carried, { errorMode: 'ignore' })).toEqual(
      toJsonSchema(plain, { errorMode: 'ignore' }),
    );
  });

  it('should carry a code on every member of the published inputs', () => {
    for (const [name, schema] of Object.entries({ CheckInputSchema, LookupInputSchema })) {
      for (const member of Object.keys(schema.entries)) {
        const raw = { url: 'https://a.example/x', [member]: { not: 'valid' } };
        const parsed = parseInput(schema, raw);
        expect(parsed.ok, `${name}.${member}`).toBe(false);
        if (!parsed.ok) {
          expect(parsed.code, `${name}.${member}`).toMatch(
            /^(?:(?:bad|missing)_[a-z_]+|payment_required_invalid)$/,
          );
        }
      }
    }
  });
});
