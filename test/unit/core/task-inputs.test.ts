import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { drawInputs, type Inputs, renderJson, renderText } from '../../../core/task-inputs.ts';

const seeds = (count: number) =>
  Array.from({ length: count }, (_, i) => createHash('sha256').update(`s${i}`).digest('hex').slice(0, 32));

const INPUTS = {
  text: { kind: 'text', length: 20 },
  count: { kind: 'integer', min: -3, max: 3 },
  amount: { kind: 'decimal', min: 0.5, max: 2, places: 2 },
  row: { kind: 'choice', values: [{ k: 'a' }, { k: 'b' }, { k: 'c' }] },
} satisfies Inputs;

describe('drawInputs', () => {
  it('draws every kind within its bounds, and reaches every value', () => {
    const counts = new Set<unknown>();
    const rows = new Set<unknown>();
    for (const seed of seeds(400)) {
      const x = drawInputs('t', INPUTS, seed);
      expect(x.text).toMatch(/^[a-z0-9]{20}$/);
      expect(Number.isInteger(x.count) && (x.count as number) >= -3 && (x.count as number) <= 3).toBe(true);
      expect(x.amount).toBeGreaterThanOrEqual(0.5);
      expect(x.amount).toBeLessThanOrEqual(2);
      expect(String(x.amount)).toMatch(/^\d+(\.\d{1,2})?$/);
      counts.add(x.count);
      rows.add((x.row as { k: string }).k);
    }
    expect([...counts].sort()).toEqual([-1, -2, -3, 0, 1, 2, 3]);
    expect([...rows].sort()).toEqual(['a', 'b', 'c']);
  });

  it('is a function of the seed, the task and the input alone', () => {
    const [seed, other] = seeds(2) as [string, string];
    const x = drawInputs('t', INPUTS, seed);
    expect(drawInputs('t', INPUTS, seed)).toEqual(x);
    expect(drawInputs('t', INPUTS, other)).not.toEqual(x);
    expect(drawInputs('u', INPUTS, seed).text).not.toBe(x.text);
    // Another input added, or the order changed: the values of the others stay.
    const { text, ...rest } = INPUTS;
    expect(drawInputs('t', { extra: { kind: 'text', length: 8 }, ...rest, text }, seed)).toMatchObject(x);
  });

  it('refuses a seed that is not 32 hex digits', () => {
    expect(() => drawInputs('t', INPUTS, 'abc')).toThrow(RangeError);
    expect(() => drawInputs('t', INPUTS, 'G'.repeat(32))).toThrow(RangeError);
  });
});

describe('templates', () => {
  const values = { n: 7, row: { en: 'cats', fr: ['chats', 'chatons'] }, s: 'a.b' };
  it('keeps a whole placeholder as its value and renders text around others', () => {
    expect(renderJson({ a: '{n}', b: 'I have {n} {row.en}.', c: [1, '{s}'], d: '{nope}' }, values)).toEqual({
      a: 7,
      b: 'I have 7 cats.',
      c: [1, 'a.b'],
      d: '{nope}',
    });
  });
  it('escapes values for patterns, and makes a word list an alternation', () => {
    const quote = (t: string) => t.replace(/[.]/g, '\\$&');
    expect(renderText('{s}-{row.fr}', values, quote)).toBe('a\\.b-(?:chats|chatons)');
  });
});
