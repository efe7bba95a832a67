/**
 * The task catalog (spec §1.4, issue 8): what the service's own known-answer calls ask each candidate endpoint,
 * and how the answer is judged. `data/tasks.json` is the checked-in catalog; `npm run known-answers -- --tasks`
 * takes any file of the same shape. The shape is published in `data/README.md`.
 */
import * as v from 'valibot';
import { parseTargetUrl } from './url.ts';

/** Candidate endpoints per task: a bound on what one run can be asked to pay. */
export const MAX_CANDIDATES = 100;
/** Longest answer-check regular expression, in characters. */
export const MAX_REGEX_LENGTH = 500;

const TaskName = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a task name is [a-z0-9._-]'));
const Text = v.pipe(v.string(), v.minLength(1), v.maxLength(500));
const Scalar = v.union([v.string(), v.number(), v.boolean()]);

/** A JSON value, as `JSON.parse` returns it (the `equals` of a pointer check, a POST body). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
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

/** RFC 6901: empty (the whole document) or `/`-prefixed tokens with `~0`/`~1` escapes only. */
const Pointer = v.pipe(
  v.string(),
  v.maxLength(500),
  v.regex(/^(\/([^~]|~[01])*)*$/, 'a JSON pointer (RFC 6901), e.g. "/data/rate"'),
);

const RegexCheck = v.pipe(
  v.strictObject({
    regex: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_REGEX_LENGTH)),
    /** Flags of the JavaScript `RegExp`: any of `i`, `m`, `s`, `u`. */
    flags: v.optional(v.pipe(v.string(), v.regex(/^(?!.*(.).*\1)[imsu]{0,4}$/, 'flags: any of i, m, s, u'))),
  }),
  v.check((check) => compiles(check.regex, check.flags ?? ''), 'regex: not a valid regular expression'),
);
const EqualsCheck = v.strictObject({ pointer: Pointer, equals: JsonValueSchema });
const RangeCheck = v.pipe(
  v.strictObject({
    pointer: Pointer,
    min: v.optional(v.pipe(v.number(), v.finite())),
    max: v.optional(v.pipe(v.number(), v.finite())),
  }),
  v.check((check) => check.min !== undefined || check.max !== undefined, 'a range check needs min or max'),
);

/**
 * How an answer is judged: the value at a JSON pointer equals a known value, or (for truths that move, such as
 * today's temperature) is a number within `min`..`max`; or the answer text matches a regular expression.
 */
export type AnswerCheck = v.InferOutput<typeof AnswerCheckSchema>;
const AnswerCheckSchema = v.union([EqualsCheck, RangeCheck, RegexCheck]);

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

/** What a known-answer call sends: the method, query parameters, and (POST) a JSON body. */
export type TaskRequest = v.InferOutput<typeof RequestSchema>;

const TaskSchema = v.strictObject({
  name: TaskName,
  title: v.optional(Text),
  description: Text,
  request: RequestSchema,
  answer_check: AnswerCheckSchema,
  candidates: v.pipe(v.array(Candidate), v.maxLength(MAX_CANDIDATES)),
  tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(64))), v.maxLength(20))),
});

const TasksFile = v.pipe(
  v.object({ tasks: v.pipe(v.array(TaskSchema), v.minLength(1)) }),
  v.check(
    (file) => new Set(file.tasks.map((task) => task.name)).size === file.tasks.length,
    'task names repeat',
  ),
);

/** One task of a catalog, answer check included. */
export type Task = v.InferOutput<typeof TaskSchema>;

/** A task as `GET /v1/tasks` publishes it: the answer check stays out (see `data/README.md`). */
export type PublicTask = Omit<Task, 'answer_check'>;

/**
 * Validates a task catalog (the parsed JSON of a tasks file); the message names the path of the first problem.
 * @example parseTasks(JSON.parse(text)) // { ok: true, value: [{ name: 'fx-rate', … }] }
 */
export function parseTasks(input: unknown): { ok: true; value: Task[] } | { ok: false; message: string } {
  const parsed = v.safeParse(TasksFile, input);
  if (parsed.success) return { ok: true, value: parsed.output.tasks };
  const issue = parsed.issues[0];
  const path = issue.path?.map((item) => String(item.key)).join('.') ?? '';
  return { ok: false, message: `${path ? `${path}: ` : ''}${issue.message}` };
}

/** The published view of a task. */
export function publicTask({ answer_check: _hidden, ...task }: Task): PublicTask {
  return task;
}

/**
 * The URL a known-answer call requests: the candidate with the task's query parameters added (the candidate's own
 * query is kept; a task parameter of the same name replaces it).
 * @example requestUrl('https://a.example/fx?x=1', { method: 'GET', query: { base: 'EUR' } }) // 'https://a.example/fx?x=1&base=EUR'
 */
export function requestUrl(candidate: string, request: TaskRequest): string {
  const url = new URL(candidate);
  for (const [key, value] of Object.entries(request.query ?? {})) url.searchParams.set(key, String(value));
  return url.toString();
}

function compiles(source: string, flags: string): boolean {
  try {
    new RegExp(source, flags);
    return true;
  } catch {
    return false;
  }
}
