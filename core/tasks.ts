/**
 * The task catalog (docs/api.md §1.4): what the service's own known-answer calls ask each candidate endpoint, and how the
 * answer is judged. `data/tasks.json` is the checked-in catalog; `npm run known-answers -- --tasks` takes any file
 * of the same shape, published in `data/README.md`. A task draws fresh inputs for every call (`core/task-inputs.ts`)
 * and checks exact fields of the answer against values computed from them (`core/answer-checks.ts`), so no answer
 * can be memorized and no constant body passes.
 */
import * as v from 'valibot';
import { type AnswerCheck, CheckSchema, checkProblems, checkRefs } from './answer-checks.ts';
import type { JsonValue } from './json-pointer.ts';
import {
  drawInputs,
  type Inputs,
  InputsSchema,
  type InputValues,
  kindsAt,
  MIN_TABLE_ROWS,
  refsIn,
  renderJson,
} from './task-inputs.ts';
import { parseTargetUrl } from './url.ts';

/** Candidate endpoints per task: a bound on what one run can be asked to pay. */
export const MAX_CANDIDATES = 100;

const TaskName = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a task name is [a-z0-9._-]'));
const Text = v.pipe(v.string(), v.minLength(1), v.maxLength(500));
const Scalar = v.union([v.string(), v.number(), v.boolean()]);

const JsonValueSchema: v.GenericSchema<JsonValue> = v.union([
  v.string(),
  v.pipe(v.number(), v.finite()),
  v.boolean(),
  v.null(),
  v.array(v.lazy(() => JsonValueSchema)),
  v.record(
    v.string(),
    v.lazy(() => JsonValueSchema),
  ),
]);

const Candidate = v.pipe(
  v.string(),
  v.check((url) => parseTargetUrl(url).ok, 'a candidate is an absolute http(s) URL without credentials'),
);

const RequestSchema = v.variant('method', [
  v.strictObject({ method: v.literal('GET'), query: v.optional(v.record(v.string(), Scalar)) }),
  v.strictObject({
    method: v.literal('POST'),
    query: v.optional(v.record(v.string(), Scalar)),
    body: v.optional(JsonValueSchema),
  }),
]);

/** What a known-answer call sends, as a template: strings may hold `{input}` placeholders (`core/task-inputs.ts`). */
export type TaskRequest = v.InferOutput<typeof RequestSchema>;

const TaskSchema = v.pipe(
  v.strictObject({
    name: TaskName,
    title: v.optional(Text),
    description: Text,
    inputs: InputsSchema,
    request: RequestSchema,
    answer: v.pipe(v.array(CheckSchema), v.minLength(1), v.maxLength(10)),
    candidates: v.pipe(v.array(Candidate), v.maxLength(MAX_CANDIDATES)),
    tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(64))), v.maxLength(20))),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = taskProblem(dataset.value.inputs, dataset.value.request, dataset.value.answer);
    if (problem !== null) addIssue({ message: problem });
  }),
);

const TasksFile = v.pipe(
  v.object({ tasks: v.pipe(v.array(TaskSchema), v.minLength(1)) }),
  v.check(
    (file) => new Set(file.tasks.map((task) => task.name)).size === file.tasks.length,
    'task names repeat',
  ),
);

/** One task of a catalog, inputs and answer checks included. */
export type Task = v.InferOutput<typeof TaskSchema>;

/** A task as `GET /v1/tasks` publishes it: how inputs are drawn and the answer checks stay out (`data/README.md`). */
export type PublicTask = Omit<Task, 'inputs' | 'answer'>;

/**
 * Validates a task catalog (the parsed JSON of a tasks file); the message names the path of the first problem.
 * @example parseTasks(JSON.parse(text)) // { ok: true, value: [{ name: 'fx-rate', … }] }
 */
export function parseTasks(input: unknown): { ok: true; value: Task[] } | { ok: false; message: string } {
  const tasks = (input as { tasks?: unknown } | null)?.tasks;
  const old = Array.isArray(tasks)
    ? tasks.findIndex((t) => t !== null && typeof t === 'object' && 'answer_check' in t)
    : -1;
  if (old >= 0) {
    const message =
      'answer_check is the earlier shape, which a constant answer could pass: give `inputs` and `answer` (data/README.md)';
    return { ok: false, message: `tasks.${old}: ${message}` };
  }
  const parsed = v.safeParse(TasksFile, input);
  if (parsed.success) return { ok: true, value: parsed.output.tasks };
  const issue = parsed.issues[0];
  const path = issue.path?.map((item) => String(item.key)).join('.') ?? '';
  return { ok: false, message: `${path ? `${path}: ` : ''}${issue.message}` };
}

/** The published view of a task. */
export function publicTask({ inputs: _inputs, answer: _answer, ...task }: Task): PublicTask {
  return task;
}

/** One call's request: the inputs drawn from its seed, the URL and (POST) the JSON body sent. */
export type CallRequest = {
  inputs: InputValues;
  url: string;
  method: 'GET' | 'POST';
  body: JsonValue | undefined;
};

/**
 * The request of one call of `task` to `candidate`, its inputs drawn from `seed`: the task's query parameters,
 * rendered, are added to the candidate URL (the candidate's own query is kept; a task parameter of the same name
 * replaces it); a POST sends the rendered body as JSON.
 * @example taskRequest(task, 'https://a.example/fx?x=1', seed).url // 'https://a.example/fx?x=1&amount=512.25'
 */
export function taskRequest(task: Task, candidate: string, seed: string): CallRequest {
  const inputs = drawInputs(task.name, task.inputs, seed);
  const url = new URL(candidate);
  for (const [key, value] of Object.entries(task.request.query ?? {}))
    url.searchParams.set(key, String(renderJson(value, inputs)));
  const body = task.request.method === 'POST' ? renderJson(task.request.body ?? {}, inputs) : undefined;
  return { inputs, url: url.toString(), method: task.request.method, body };
}

/**
 * What makes a task unable to keep its guarantee, or null: a reference to no input, an operand of the wrong type,
 * a request that sends a word list, or checks that depend on no input (a constant answer would pass; a one-sided
 * bound does not count) or only on a table too short to keep a constant answer from passing often.
 */
function taskProblem(inputs: Inputs, request: TaskRequest, answer: AnswerCheck[]): string | null {
  const sent = [...Object.values(request.query ?? {}), ...('body' in request ? [request.body ?? null] : [])];
  for (const ref of sent.flatMap((value) => refsIn(value as JsonValue))) {
    const kinds = kindsAt(inputs, ref);
    if (kinds === null) return `request: no input ${ref}`;
    if (kinds.has('words')) return `request: ${ref} is a word list, usable in patterns only`;
  }
  for (const [i, check] of answer.entries()) {
    const problems = checkProblems(check, inputs);
    if (problems.length > 0) return `answer.${i}: ${problems[0]}`;
  }
  // A bound on one side only is met by a constant far enough out: it ties no answer to the inputs.
  const binding = answer.filter(
    (check) => !('min' in check || 'max' in check) || (check.min !== undefined && check.max !== undefined),
  );
  const names = new Set(binding.flatMap(checkRefs).map((ref) => ref.split('.')[0] as string));
  if (names.size === 0) return 'answer: no check depends on an input, so a constant answer would pass';
  const fresh = [...names].some((name) => inputs[name]?.kind !== 'choice');
  const rows = Math.max(
    ...[...names].map((name) => (inputs[name]?.kind === 'choice' ? inputs[name].values.length : 0)),
  );
  if (!fresh && rows < MIN_TABLE_ROWS)
    return `answer: checks depend only on tables of fewer than ${MIN_TABLE_ROWS} rows`;
  return null;
}
