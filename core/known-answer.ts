/**
 * Judging what a paid call delivered (docs/api.md §1.4): delivered yes/no and the task's known answer pass/fail, with a
 * stable code saying why not. Pure: the caller reads the body (bounded, `MAX_ANSWER_BYTES`) and passes its text.
 *
 * Delivered means the seller answered 2xx with a JSON body. An empty body, a 4xx/5xx after payment, or text that is
 * not JSON is "took the money and delivered nothing or garbage", which is what sends a service to `facts_only`.
 *
 * Passed means every check of the task holds for the inputs the call sent (`core/answer-checks.ts`), and the answer
 * passes no other task of the run for the inputs that task would draw from the same seed: an answer built to satisfy
 * several tasks at once is not an answer to this one.
 */
import { runAnswerCheck } from './answer-checks.ts';
import type { JsonValue } from './json-pointer.ts';
import { drawInputs, MIN_TABLE_ROWS } from './task-inputs.ts';
import type { Task } from './tasks.ts';

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
  | 'no_match'
  | 'matches_other_input'
  | 'passes_other_task';

/** What was delivered, as the caller read it. */
export type DeliveredAnswer = { status: number; text: string; truncated: boolean };

/** One call to judge: its task, the seed its inputs were drawn from, and the run's other tasks. */
export type KnownAnswerCase = { task: Task; seed: string; others: readonly Task[] };

export type AnswerVerdict = {
  delivered: boolean;
  /** A seller that delivered nothing did not give the known answer either: `fail`, never null (null is for
   * calls that failed on our side, which never reach this function). */
  known_answer: 'pass' | 'fail';
  why: FailureCode | null;
  /** Plain words for `why`; null on a pass. */
  detail: string | null;
};

/** The rules of judging, in words, for the rules document (`core/rules.ts`). */
export const KNOWN_ANSWER_RULES: readonly string[] = [
  'Every paid call carries fresh inputs drawn from a random seed (random text, numbers in a range, or a row of a table); the paid-call receipt records the seed and the inputs, so anyone can draw them again.',
  'The expected answer is computed by the service from those inputs (a SHA-256, a sum, a conversion, a table row), never stored.',
  'Delivered: a 2xx answer of at most 1 MiB whose body is JSON. Anything else is not delivered and fails.',
  'Each check reads one exact field by JSON pointer (RFC 6901) and compares it: equal as JSON, a number within a tolerance or bounds, or a string that a pattern matches from its first character to its last.',
  'A pattern made from a table row must not also match the pattern of any other row: an answer naming every row passes none.',
  `A task whose checks depend on no input (a bound on one side only does not count) is refused; one whose checks depend only on a table needs at least ${MIN_TABLE_ROWS} rows, so a constant answer passes at most the calls that draw its row.`,
  'An answer that also passes another task of the run, for the inputs that task draws from the same seed, fails (passes_other_task): one body cannot answer several tasks.',
  'The calls of a run are paid from a wallet derived for that run alone and funded from the configured payer, so a seller cannot recognize the service’s payments by a wallet it saw before.',
];

/**
 * Judges one delivered answer to a call of `known.task`.
 * @example judgeAnswer({ task, seed, others: [] }, { status: 200, text: '{"sha256":"…"}', truncated: false })
 *   // { delivered: true, known_answer: 'pass', why: null, detail: null }
 */
export function judgeAnswer(known: KnownAnswerCase, answer: DeliveredAnswer): AnswerVerdict {
  if (answer.status < 200 || answer.status > 299)
    return undelivered('bad_status', `the paid request was answered ${answer.status}`);
  if (answer.truncated)
    return undelivered('answer_too_large', `the answer is longer than ${MAX_ANSWER_BYTES} bytes`);
  if (answer.text.trim() === '') return undelivered('empty_body', 'the answer is empty');
  const document = parseJson(answer.text);
  if (!document.ok) return undelivered('not_json', 'the task asks for JSON and the answer is not JSON');
  const failed = failureOf(known.task, known.seed, document.value);
  if (failed !== null) return { delivered: true, known_answer: 'fail', ...failed };
  for (const other of known.others) {
    if (other.name === known.task.name) continue;
    if (failureOf(other, known.seed, document.value) === null) {
      const detail = `the answer also passes task ${other.name}, so it answers no task in particular`;
      return { delivered: true, known_answer: 'fail', why: 'passes_other_task', detail };
    }
  }
  return { delivered: true, known_answer: 'pass', why: null, detail: null };
}

function failureOf(
  task: Task,
  seed: string,
  document: JsonValue,
): { why: FailureCode; detail: string } | null {
  const values = drawInputs(task.name, task.inputs, seed);
  for (const check of task.answer) {
    const failed = runAnswerCheck(check, document, task.inputs, values);
    if (failed !== null) return failed;
  }
  return null;
}

function parseJson(text: string): { ok: true; value: JsonValue } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch {
    // Syntax errors, and a RangeError for nesting too deep for the parser: garbage either way.
    return { ok: false };
  }
}

function undelivered(why: FailureCode, detail: string): AnswerVerdict {
  return { delivered: false, known_answer: 'fail', why, detail };
}
