/**
 * The checks of a known answer (data/README.md "Answer checks"): each reads one exact field of the JSON answer by
 * RFC 6901 pointer and compares it with a value the service computes from the call's inputs: equal as JSON, a
 * number near a value or within bounds, or a string matching a pattern that must cover the whole value. Pure.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import * as v from 'valibot';
import { addDecimals, decimal, decimalText, multiplyDecimals } from './exact-decimal.ts';
import { canonicalJson } from './jcs.ts';
import type { JsonValue } from './json-pointer.ts';
import { resolvePointer } from './json-pointer.ts';
import { type Inputs, type InputValues, kindsAt, refsIn, renderText, valueAt } from './task-inputs.ts';

const Ref = v.pipe(
  v.string(),
  v.regex(/^[a-z][a-z0-9_]{0,31}(\.[a-z][a-z0-9_]{0,31})?$/, 'an input reference'),
);
const Template = v.pipe(v.string(), v.minLength(1), v.maxLength(500));

/** A value computed from the inputs. */
export type Expr =
  | number
  | { input: string }
  | { value: JsonValue }
  | { text: string }
  | { sha256: Expr }
  | { sum: Expr[] }
  | { product: Expr[] };

const JsonSchema: v.GenericSchema<JsonValue> = v.union([
  v.string(),
  v.pipe(v.number(), v.finite()),
  v.boolean(),
  v.null(),
  v.array(v.lazy(() => JsonSchema)),
  v.record(
    v.string(),
    v.lazy(() => JsonSchema),
  ),
]);
const Operands = v.pipe(v.array(v.lazy(() => ExprSchema)), v.minLength(2), v.maxLength(10));
const ExprSchema: v.GenericSchema<Expr> = v.union([
  v.pipe(v.number(), v.finite()),
  v.strictObject({ input: Ref }),
  v.strictObject({ value: JsonSchema }),
  v.strictObject({ text: Template }),
  v.strictObject({ sha256: v.lazy(() => ExprSchema) }),
  v.strictObject({ sum: Operands }),
  v.strictObject({ product: Operands }),
]);

/** RFC 6901, and never the whole document: a check reads one field. */
const Pointer = v.pipe(
  v.string(),
  v.maxLength(500),
  v.regex(/^(\/([^~]|~[01])*)+$/, 'a JSON pointer (RFC 6901) to a field, e.g. "/data/rate"'),
);
const Flags = v.pipe(v.string(), v.regex(/^(?!.*(.).*\1)[isu]{0,3}$/, 'flags: any of i, s, u'));

/** One check of a known answer. */
export type AnswerCheck = v.InferOutput<typeof CheckSchema>;
export const CheckSchema = v.union([
  v.strictObject({ pointer: Pointer, equals: ExprSchema }),
  v.strictObject({
    pointer: Pointer,
    near: ExprSchema,
    tolerance: v.pipe(v.number(), v.finite(), v.gtValue(0)),
  }),
  v.pipe(
    v.strictObject({ pointer: Pointer, min: v.optional(ExprSchema), max: v.optional(ExprSchema) }),
    v.check((c) => c.min !== undefined || c.max !== undefined, 'a range check needs min or max'),
  ),
  v.strictObject({ pointer: Pointer, matches: Template, flags: v.optional(Flags) }),
]);

/** Why a check failed, as a stable code (data/README.md). */
export type CheckFailure =
  | 'pointer_missing'
  | 'value_differs'
  | 'out_of_range'
  | 'no_match'
  | 'matches_other_input';

/**
 * Runs one check on a parsed answer; null when it passes. A pattern must match the whole string value (it is
 * compiled as `^(?:…)$`, placeholders inserted as literal text), and must not also match the pattern made from any
 * other row of a table input it names, so an answer naming every row's subject passes none.
 */
export function runAnswerCheck(
  check: AnswerCheck,
  answer: JsonValue,
  inputs: Inputs,
  values: InputValues,
): { why: CheckFailure; detail: string } | null {
  const found = resolvePointer(answer, check.pointer);
  if (!found.ok) return { why: 'pointer_missing', detail: `the answer has no value at ${check.pointer}` };
  const x = found.value;
  const at = check.pointer;
  if ('equals' in check) {
    return sameJson(x, evaluate(check.equals, values))
      ? null
      : { why: 'value_differs', detail: `the value at ${at} differs from the known answer` };
  }
  if ('near' in check) {
    const want = evaluate(check.near, values) as number;
    return typeof x === 'number' && Math.abs(x - want) <= check.tolerance
      ? null
      : {
          why: 'out_of_range',
          detail: `the value at ${at} is not within ${check.tolerance} of the known answer`,
        };
  }
  if ('matches' in check) {
    const test = (row: InputValues) => typeof x === 'string' && pattern(check, row).test(x);
    if (!test(values))
      return { why: 'no_match', detail: `the value at ${at} does not match the known answer` };
    for (const other of otherRows(check.matches, inputs, values)) {
      if (test(other))
        return { why: 'matches_other_input', detail: `the value at ${at} also fits an input not asked` };
    }
    return null;
  }
  const min = check.min === undefined ? null : (evaluate(check.min, values) as number);
  const max = check.max === undefined ? null : (evaluate(check.max, values) as number);
  const inRange = typeof x === 'number' && (min === null || x >= min) && (max === null || x <= max);
  return inRange ? null : { why: 'out_of_range', detail: `the value at ${at} is not within the known range` };
}

/** The value of an expression for one call's inputs (types were checked when the task file was read). */
export function evaluate(expr: Expr, values: InputValues): JsonValue {
  if (typeof expr === 'number') return expr;
  if ('input' in expr) return valueAt(values, expr.input) ?? null;
  if ('value' in expr) return expr.value;
  if ('text' in expr) return renderText(expr.text, values);
  if ('sha256' in expr) {
    const of = evaluate(expr.sha256, values);
    return bytesToHex(sha256(utf8ToBytes(typeof of === 'string' ? of : canonicalJson(of))));
  }
  const operands = ('sum' in expr ? expr.sum : expr.product).map((e) =>
    decimal(evaluate(e, values) as number),
  );
  const result = operands.reduce((a, b) => ('sum' in expr ? addDecimals(a, b) : multiplyDecimals(a, b)));
  return Number(decimalText(result));
}

/** Problems of a check against the task's inputs: unknown references, and operands of the wrong type. */
export function checkProblems(check: AnswerCheck, inputs: Inputs): string[] {
  const problems: string[] = [];
  const ref = (r: string, want: 'number' | 'scalar' | 'any') => {
    const kinds = kindsAt(inputs, r);
    if (kinds === null) problems.push(`no input ${r}`);
    else if (want === 'number' && [...kinds].some((k) => k !== 'number'))
      problems.push(`${r} is not a number`);
    else if (want === 'scalar' && kinds.has('words'))
      problems.push(`${r} is a word list, usable in patterns only`);
  };
  const walk = (e: Expr, want: 'number' | 'any') => {
    if (typeof e === 'number') return;
    if ('input' in e) ref(e.input, want);
    else if ('value' in e || 'text' in e) {
      if (want === 'number' && !('value' in e && typeof e.value === 'number')) problems.push('not a number');
      if ('text' in e) for (const r of refsIn(e.text)) ref(r, 'scalar');
    } else if ('sha256' in e) {
      if (want === 'number') problems.push('sha256 is not a number');
      walk(e.sha256, 'any');
    } else for (const operand of 'sum' in e ? e.sum : e.product) walk(operand, 'number');
  };
  if ('equals' in check) walk(check.equals, 'any');
  if ('near' in check) walk(check.near, 'number');
  if ('min' in check && check.min !== undefined) walk(check.min, 'number');
  if ('max' in check && check.max !== undefined) walk(check.max, 'number');
  if ('matches' in check) {
    for (const r of refsIn(check.matches)) ref(r, 'any');
    if (!compiles(check.matches.replace(/\{[a-z][a-z0-9_.]*\}/g, 'x'), check.flags ?? ''))
      problems.push('matches: not a valid regular expression');
  }
  return problems;
}

/** The input references a check's expected value depends on. */
export function checkRefs(check: AnswerCheck): string[] {
  const of = (e: Expr | undefined): string[] => {
    if (e === undefined || typeof e === 'number') return [];
    if ('input' in e) return [e.input];
    if ('value' in e) return [];
    if ('text' in e) return refsIn(e.text);
    if ('sha256' in e) return of(e.sha256);
    return ('sum' in e ? e.sum : e.product).flatMap(of);
  };
  if ('matches' in check) return refsIn(check.matches);
  if ('equals' in check) return of(check.equals);
  if ('near' in check) return of(check.near);
  return [...of(check.min), ...of(check.max)];
}

function pattern(check: { matches: string; flags?: string | undefined }, values: InputValues): RegExp {
  return new RegExp(`^(?:${renderText(check.matches, values, escapeRegex)})$`, check.flags ?? '');
}

/** The inputs of the call with one table input set to each of its other rows, for every table the pattern names. */
function otherRows(template: string, inputs: Inputs, values: InputValues): InputValues[] {
  const tables = new Set(refsIn(template).map((r) => r.split('.')[0] as string));
  const out: InputValues[] = [];
  for (const name of tables) {
    const spec = inputs[name];
    if (spec?.kind !== 'choice') continue;
    const asked = canonicalJson(values[name] as JsonValue);
    for (const row of spec.values)
      if (canonicalJson(row as JsonValue) !== asked) out.push({ ...values, [name]: row as JsonValue });
  }
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Equal as JSON values: same canonical (RFC 8785) text, so key order and number spelling do not matter. */
function sameJson(a: JsonValue, b: JsonValue): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    // A lone surrogate or a value nested beyond the stack in the seller's answer: not the known answer.
    return false;
  }
}

function compiles(source: string, flags: string): boolean {
  try {
    new RegExp(`^(?:${source})$`, flags);
    return true;
  } catch {
    return false;
  }
}
