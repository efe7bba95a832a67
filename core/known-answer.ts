/**
 * Judging what a paid call delivered (spec §1.4): delivered yes/no and the task's known answer pass/fail, with a
 * stable code saying why not. Pure: the caller reads the body (bounded, `MAX_ANSWER_BYTES`) and passes its text.
 *
 * Delivered means the seller answered 2xx with a body in the form the task asks for: any non-empty text for a regex
 * check, JSON for a pointer check. An empty body, a 4xx/5xx after payment, or text where JSON was asked is "took the
 * money and delivered nothing or garbage" (issue 8), which is what sends a service to `facts_only`.
 */
import { canonicalJson } from './jcs.ts';
import type { AnswerCheck, JsonValue } from './tasks.ts';

/** Most answer bytes read and judged; a longer answer is not delivered (`answer_too_large`). */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** Why a call did not pass, as a stable code (published in `data/README.md`). */
export type FailureCode =
  | 'bad_status'
  | 'empty_body'
  | 'answer_too_large'
  | 'not_json'
  | 'pointer_missing'
  | 'value_differs'
  | 'out_of_range'
  | 'no_match';

/** What was delivered, as the caller read it. */
export type DeliveredAnswer = { status: number; text: string; truncated: boolean };

export type AnswerVerdict = {
  delivered: boolean;
  /** A seller that delivered nothing did not give the known answer either: `fail`, never null (null is for
   * calls that failed on our side, which never reach this function). */
  known_answer: 'pass' | 'fail';
  why: FailureCode | null;
  /** Plain words for `why`; null on a pass. */
  detail: string | null;
};

/**
 * Judges one delivered answer against a task's check.
 * @example judgeAnswer({ pointer: '/rate', equals: 1.09 }, { status: 200, text: '{"rate":1.09}', truncated: false })
 *   // { delivered: true, known_answer: 'pass', why: null, detail: null }
 */
export function judgeAnswer(check: AnswerCheck, answer: DeliveredAnswer): AnswerVerdict {
  if (answer.status < 200 || answer.status > 299)
    return undelivered('bad_status', `the paid request was answered ${answer.status}`);
  if (answer.truncated)
    return undelivered('answer_too_large', `the answer is longer than ${MAX_ANSWER_BYTES} bytes`);
  if (answer.text.trim() === '') return undelivered('empty_body', 'the answer is empty');
  if ('regex' in check) {
    const matched = new RegExp(check.regex, check.flags ?? '').test(answer.text);
    return matched ? pass() : fail('no_match', 'the answer does not match the known answer');
  }
  const document = parseJson(answer.text);
  if (!document.ok) return undelivered('not_json', 'the task asks for JSON and the answer is not JSON');
  const found = resolvePointer(document.value, check.pointer);
  if (!found.ok) return fail('pointer_missing', `the answer has no value at ${check.pointer}`);
  if ('equals' in check) {
    return sameJson(found.value, check.equals)
      ? pass()
      : fail('value_differs', `the value at ${check.pointer} differs from the known answer`);
  }
  const x = found.value;
  const inRange =
    typeof x === 'number' &&
    (check.min === undefined || x >= check.min) &&
    (check.max === undefined || x <= check.max);
  return inRange
    ? pass()
    : fail('out_of_range', `the value at ${check.pointer} is not a number within the known range`);
}

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

function parseJson(text: string): { ok: true; value: JsonValue } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch {
    // Syntax errors, and a RangeError for nesting too deep for the parser: garbage either way.
    return { ok: false };
  }
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

function pass(): AnswerVerdict {
  return { delivered: true, known_answer: 'pass', why: null, detail: null };
}

function fail(why: FailureCode, detail: string): AnswerVerdict {
  return { delivered: true, known_answer: 'fail', why, detail };
}

function undelivered(why: FailureCode, detail: string): AnswerVerdict {
  return { delivered: false, known_answer: 'fail', why, detail };
}
