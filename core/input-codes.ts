/**
 * The stable 400 codes of a route's input, carried on the very valibot schema the route publishes
 * (`core/request-schemas.ts`): each member says which code its failure answers with, and in which words, and the
 * route parses with that schema ({@link parseInput}). The code travels as valibot metadata under a symbol, so the
 * JSON Schema published from the same schema (`/openapi.json`, the MCP tools) is unchanged by it.
 *
 * The answer names the first bad member, in the order the members are published unless the input's rule gives the
 * order the route checks them in (`order`): which member is named first is part of what a caller sees.
 */
import * as v from 'valibot';

/** A refused input as the route answers it: `apiError(400, code, message)`. */
export type InputFailure = { code: string; message: string };

/** The input as the route uses it, or the 400 of its first bad member. */
export type InputResult<T> = { ok: true; value: T } | ({ ok: false } & InputFailure);

type Issue = v.BaseIssue<unknown>;

/**
 * How a failure is answered: a code with fixed words or words made from valibot's issue (each schema and action of
 * the member may carry its own message); or a function of the issue, for a member whose failures differ (a
 * missing url against a bad one).
 */
export type InputRule =
  | { code: string; message?: string | ((issue: Issue) => string) }
  | ((issue: Issue) => InputFailure);

/** What else a rule says about its member, or about the whole input. */
export type InputRuleOptions = {
  /** Values that mean "not given" for this member (a form's `''`, a client's `null`): read as absent. */
  absent?: readonly unknown[];
  /** On the whole input: a member given more than once (a repeated query parameter) is refused with this code,
   *  before any member is checked. */
  repeated?: string;
  /** On the whole input: the order its members are checked in, when it is not the order they are published in
   *  (members not listed come after, in the published order). */
  order?: readonly string[];
};

type Rule = { rule: InputRule; options: InputRuleOptions };

const RULE = Symbol.for('spotcheck.input-rule');

/**
 * Carries `rule` on `schema`: a member of an input schema, or the input schema itself (its rule answers the failures
 * of no single member).
 *
 * @example coded(TaskNameField, { code: 'bad_task', message: 'task must be a task name.' }, { absent: [null, ''] })
 */
export function coded<const T extends v.GenericSchema>(
  schema: T,
  rule: InputRule,
  options: InputRuleOptions = {},
) {
  return v.pipe(schema, v.metadata({ [RULE]: { rule, options } satisfies Rule }));
}

/**
 * Parses `raw` with an input schema whose members carry their codes ({@link coded}): the value, or the code and
 * words of the first bad member in the schema's order.
 *
 * @example parseInput(CheckInputSchema, { url: 'https://a.example/x' }) // { ok: true, value: { url: … } }
 */
export function parseInput<const T extends v.GenericSchema>(
  schema: T,
  raw: unknown,
): InputResult<v.InferOutput<T>> {
  const root = ruleOf(schema);
  if (isObject(raw)) {
    if (root?.options.repeated !== undefined) {
      const repeated = Object.entries(raw).find(([, value]) => Array.isArray(value));
      if (repeated) {
        return fail(root.options.repeated, `Parameter ${repeated[0]} is given more than once.`);
      }
    }
    raw = withoutAbsent(schema, raw);
  }
  const order = root?.options.order;
  const parsed = v.safeParse(schema, raw, { abortEarly: order === undefined });
  if (parsed.success) return { ok: true, value: parsed.output };
  const issue = order === undefined ? parsed.issues[0] : firstIn(order, parsed.issues);
  return { ok: false, ...failureOf(schema, issue) };
}

/** The issue of the member checked first: by `order`, else by the published order valibot reports them in. */
function firstIn(order: readonly string[], issues: readonly [Issue, ...Issue[]]): Issue {
  const rank = (issue: Issue) => {
    const key = issue.path?.[0]?.key;
    // A rule of the whole input (a paid lookup's reference) is named only when every member is good.
    if (key === undefined) return order.length + 1;
    const at = order.indexOf(String(key));
    return at === -1 ? order.length : at;
  };
  // A stable pick: among issues of one rank (unlisted members), valibot's order decides.
  return issues.reduce((first, issue) => (rank(issue) < rank(first) ? issue : first));
}

/** The members of `raw` without those their rule reads as absent. */
function withoutAbsent(schema: v.GenericSchema, raw: Record<string, unknown>): Record<string, unknown> {
  const entries = entriesOf(schema);
  if (entries === undefined) return raw;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    const member = Object.hasOwn(entries, name) ? ruleOf(entries[name]) : undefined;
    if (!member?.options.absent?.includes(value)) out[name] = value;
  }
  return out;
}

/** The failure of `issue`: the rule of the deepest member on its path that carries one, else the input's own. */
function failureOf(schema: v.GenericSchema, issue: Issue): InputFailure {
  let found = ruleOf(schema);
  let node: unknown = schema;
  for (const step of issue.path ?? []) {
    const entries = entriesOf(node);
    const key = step.key;
    if (entries === undefined || typeof key !== 'string' || !Object.hasOwn(entries, key)) break;
    node = entries[key];
    found = ruleOf(node) ?? found;
  }
  // Every input schema carries a rule at its root; a schema without one is a bug of the route.
  if (found === undefined) throw new TypeError('[spotcheck] input schema without a rule');
  const { rule } = found;
  if (typeof rule === 'function') return rule(issue);
  const message = rule.message ?? ((failed: Issue) => failed.message);
  return { code: rule.code, message: typeof message === 'string' ? message : message(issue) };
}

type Node = {
  kind?: string;
  type?: string;
  pipe?: readonly Node[];
  wrapped?: Node;
  entries?: Record<string, Node>;
  metadata?: Record<PropertyKey, unknown>;
};

/** The rule carried on a schema, looking through its pipe and its `optional`/`nullable` wrappers; outer wins. */
function ruleOf(schema: unknown): Rule | undefined {
  const node = schema as Node;
  if (node.kind === 'metadata') return node.metadata?.[RULE] as Rule | undefined;
  for (const item of [...(node.pipe ?? [])].reverse()) {
    // A pipe's first item is the schema it was built from, which holds no pipe of its own unless nested.
    if (item === node) continue;
    const found = item.kind === 'metadata' || item.pipe || item.wrapped ? ruleOf(item) : undefined;
    if (found) return found;
  }
  return node.wrapped === undefined ? undefined : ruleOf(node.wrapped);
}

/** The members of an object schema, looking through pipes and wrappers. */
function entriesOf(schema: unknown): Record<string, Node> | undefined {
  const node = schema as Node;
  if (node.entries !== undefined) return node.entries;
  return node.wrapped === undefined ? undefined : entriesOf(node.wrapped);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(code: string, message: string): { ok: false } & InputFailure {
  return { ok: false, code, message };
}
