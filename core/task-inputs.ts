/**
 * Fresh inputs of a known-answer call (data/README.md "Inputs"): each task names its inputs (random text, an
 * integer or a decimal in a range, or one row of a table), and every call draws new values from a seed, so no answer
 * can be memorized. Drawing is pure and deterministic: the same seed and task give the same values (an auditor
 * redraws them from the seed a paid-call receipt records), each input from its own SHA-256 stream.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import * as v from 'valibot';
import type { JsonValue } from './json-pointer.ts';

/** Bytes of a call's seed (drawn by the caller's `random`); written as 32 lower-case hex digits. */
export const SEED_BYTES = 16;
/** Fewest rows of a table input that a task may rely on alone: a constant answer passes at most 1 call in this. */
export const MIN_TABLE_ROWS = 6;

const Name = v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,31}$/, 'an input name is [a-z][a-z0-9_]'));
const Safe = v.pipe(v.number(), v.safeInteger());
const Cell = v.union([
  v.pipe(v.string(), v.maxLength(500)),
  v.pipe(v.number(), v.finite()),
  v.boolean(),
  v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(100))), v.minLength(1), v.maxLength(20)),
]);

const TextInput = v.strictObject({
  kind: v.literal('text'),
  length: v.pipe(v.number(), v.integer(), v.minValue(8), v.maxValue(200)),
});
const IntegerInput = v.pipe(
  v.strictObject({ kind: v.literal('integer'), min: Safe, max: Safe }),
  v.check((i) => i.min < i.max && i.max - i.min < 2 ** 48, 'an integer input needs min < max (within 2^48)'),
);
const DecimalInput = v.pipe(
  v.strictObject({
    kind: v.literal('decimal'),
    min: v.pipe(v.number(), v.finite()),
    max: v.pipe(v.number(), v.finite()),
    places: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(6)),
  }),
  v.check(
    (d) => d.min < d.max && onGrid(d.min, d.places) && onGrid(d.max, d.places) && Math.abs(d.max) < 1e9,
    'a decimal input needs min < max below 1e9, each with at most `places` decimals',
  ),
);
const ChoiceInput = v.pipe(
  v.strictObject({
    kind: v.literal('choice'),
    values: v.pipe(
      v.array(
        v.pipe(
          v.record(Name, Cell),
          v.check((row) => Object.keys(row).length > 0, 'an empty row'),
        ),
      ),
      v.minLength(2),
      v.maxLength(100),
    ),
  }),
  v.check((c) => {
    const keys = (row: object) => Object.keys(row).sort().join(',');
    return c.values.every((row) => keys(row) === keys(c.values[0] as object));
  }, 'every row of a choice input has the same fields'),
);

/** How one input is drawn. */
export type InputSpec = v.InferOutput<typeof InputSchema>;
const InputSchema = v.variant('kind', [TextInput, IntegerInput, DecimalInput, ChoiceInput]);

/** A task's inputs by name (1 to 10). */
export const InputsSchema = v.pipe(
  v.record(Name, InputSchema),
  v.check((inputs) => Object.keys(inputs).length >= 1 && Object.keys(inputs).length <= 10, '1 to 10 inputs'),
);
export type Inputs = Record<string, InputSpec>;

/** The values one call drew, by input name: a string, a number, or a table row. */
export type InputValues = Record<string, JsonValue>;

/** A placeholder in a template: `{name}` or `{name.field}` (a field of a table row). */
export const PLACEHOLDER = /\{([a-z][a-z0-9_]{0,31}(?:\.[a-z][a-z0-9_]{0,31})?)\}/g;

/**
 * Draws every input of a task from `seed` (32 hex digits): input `x` of task `t` reads the stream
 * SHA-256(seed ‖ "t\nx" ‖ counter), so values do not depend on the order or number of other inputs.
 * @example drawInputs('hash-sha256', { text: { kind: 'text', length: 8 } }, '00'.repeat(16)) // { text: '…' }
 */
export function drawInputs(task: string, inputs: Inputs, seed: string): InputValues {
  if (!/^[0-9a-f]{32}$/.test(seed)) throw new RangeError(`not a seed: ${seed}`);
  const values: InputValues = {};
  for (const [name, spec] of Object.entries(inputs)) {
    const next = stream(hexToBytes(seed), `${task}\n${name}`);
    values[name] = draw(spec, next);
  }
  return values;
}

/** The value a reference (`name` or `name.field`) names; undefined when it names nothing. */
export function valueAt(values: InputValues, ref: string): JsonValue | undefined {
  const [name = '', field] = ref.split('.');
  const value = Object.hasOwn(values, name) ? values[name] : undefined;
  if (field === undefined || value === undefined) return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, field) ? value[field] : undefined;
}

/** What a reference may hold, read from the specs: for a table field, the set of its cells' types. */
export function kindsAt(inputs: Inputs, ref: string): Set<'string' | 'number' | 'boolean' | 'words'> | null {
  const [name = '', field] = ref.split('.');
  const spec = Object.hasOwn(inputs, name) ? inputs[name] : undefined;
  if (spec === undefined) return null;
  if (spec.kind === 'choice') {
    if (field === undefined || !spec.values.every((row) => Object.hasOwn(row, field))) return null;
    return new Set(spec.values.map((row) => cellKind(row[field] as v.InferOutput<typeof Cell>)));
  }
  if (field !== undefined) return null;
  return new Set([spec.kind === 'text' ? 'string' : 'number']);
}

/** Renders a template: placeholders replaced by their values' text (`quote` applied to each); others kept. */
export function renderText(template: string, values: InputValues, quote = (s: string) => s): string {
  return template.replace(PLACEHOLDER, (whole: string, ref: string) => {
    const value = valueAt(values, ref);
    if (value === undefined) return whole;
    if (Array.isArray(value)) return `(?:${value.map((w) => quote(String(w))).join('|')})`;
    return quote(String(value));
  });
}

/** Renders a JSON template: a string that is one placeholder takes its value as is, other strings are rendered. */
export function renderJson(template: JsonValue, values: InputValues): JsonValue {
  if (typeof template === 'string') {
    const whole = /^\{([a-z][a-z0-9_.]*)\}$/.exec(template);
    const value = whole ? valueAt(values, whole[1] as string) : undefined;
    return value !== undefined ? value : renderText(template, values);
  }
  if (Array.isArray(template)) return template.map((item) => renderJson(item, values));
  if (template !== null && typeof template === 'object')
    return Object.fromEntries(Object.entries(template).map(([k, item]) => [k, renderJson(item, values)]));
  return template;
}

/** Every reference a template or JSON template holds. */
export function refsIn(template: JsonValue): string[] {
  if (typeof template === 'string') return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
  if (Array.isArray(template)) return template.flatMap(refsIn);
  if (template !== null && typeof template === 'object') return Object.values(template).flatMap(refsIn);
  return [];
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function draw(spec: InputSpec, next: () => number): JsonValue {
  switch (spec.kind) {
    case 'text': {
      let text = '';
      while (text.length < spec.length) {
        const byte = next();
        // 252 = 7 × 36: bytes above would favour the first letters.
        if (byte < 252) text += ALPHABET[byte % 36];
      }
      return text;
    }
    case 'integer':
      return spec.min + Number(uniform(BigInt(spec.max - spec.min + 1), next));
    case 'decimal': {
      const scale = 10 ** spec.places;
      const low = Math.round(spec.min * scale);
      const units = low + Number(uniform(BigInt(Math.round(spec.max * scale) - low + 1), next));
      return Number((units / scale).toFixed(spec.places));
    }
    case 'choice':
      return spec.values[Number(uniform(BigInt(spec.values.length), next))] as JsonValue;
  }
}

/** Uniform in [0, range) from 64-bit draws, rejecting the biased top. */
function uniform(range: bigint, next: () => number): bigint {
  const space = 2n ** 64n;
  const limit = space - (space % range);
  for (;;) {
    let x = 0n;
    for (let i = 0; i < 8; i++) x = (x << 8n) | BigInt(next());
    if (x < limit) return x % range;
  }
}

function stream(seed: Uint8Array, label: string): () => number {
  const prefix = concatBytes(seed, utf8ToBytes(label));
  let block = new Uint8Array(0);
  let at = 0;
  let counter = 0;
  return () => {
    if (at >= block.length) {
      const count = new Uint8Array([
        counter >>> 24,
        (counter >>> 16) & 255,
        (counter >>> 8) & 255,
        counter & 255,
      ]);
      block = sha256(concatBytes(prefix, count));
      counter++;
      at = 0;
    }
    return block[at++] as number;
  };
}

function onGrid(x: number, places: number): boolean {
  const scaled = x * 10 ** places;
  return Math.abs(scaled - Math.round(scaled)) < 1e-6;
}

function cellKind(cell: v.InferOutput<typeof Cell>): 'string' | 'number' | 'boolean' | 'words' {
  if (Array.isArray(cell)) return 'words';
  return typeof cell === 'string' ? 'string' : typeof cell === 'number' ? 'number' : 'boolean';
}
