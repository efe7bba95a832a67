/**
 * Functions that read as one idea: no product function in `core/`, `io/`, `api/`, `crawl/`, `site/` or `verify/`
 * runs past {@link MAX_LINES} lines unless a `// long: <reason>` line comment sits right above it saying why (a flat
 * table, a switch over many codes). Measured with the TypeScript parser, so function declarations, methods, getters,
 * and arrow functions or function expressions assigned to consts or object members all count; a nested function is
 * measured on its own and also counts towards the one around it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const LAYERS = ['core', 'io', 'api', 'crawl', 'site', 'verify'];
const MAX_LINES = 80;
const REASON = /^\/\/\s*long:\s*\S/;

/** One function found in a source file: where it is, how many lines it spans, and whether a reason is given. */
interface Measured {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
  readonly reasoned: boolean;
}

/** The node whose leading comments speak for `fn`: its statement, property or declaration. */
function anchorOf(fn: ts.Node): ts.Node {
  const parent = fn.parent;
  if (ts.isVariableDeclaration(parent)) return parent.parent.parent ?? parent;
  if (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isExportAssignment(parent))
    return parent;
  return fn;
}

/** A readable name for `fn`. */
function nameOf(fn: ts.Node, source: ts.SourceFile): string {
  const named = fn as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(source);
  const parent = fn.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name !== undefined)
    return parent.name.getText(source);
  return '<anonymous>';
}

/** Whether a `// long: <reason>` comment is among the comments right above `node`. */
function hasReason(node: ts.Node, text: string): boolean {
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  return ranges.some((r) => REASON.test(text.slice(r.pos, r.end)));
}

/** Every function of one file with its length in lines, signature to closing brace. */
function measure(file: string, text: string): Measured[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Measured[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({
        file,
        name: nameOf(node, source),
        line: start + 1,
        lines: end - start + 1,
        reasoned: hasReason(anchorOf(node), text) || hasReason(node, text),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('function length', () => {
  it(`no product function runs past ${MAX_LINES} lines without a "// long:" reason`, () => {
    const long = LAYERS.flatMap((layer) => filesOf(join(ROOT, layer)))
      .flatMap((file) => measure(relative(ROOT, file), readFileSync(file, 'utf8')))
      .filter((f) => f.lines > MAX_LINES && !f.reasoned)
      .sort((a, b) => b.lines - a.lines)
      .map((f) => `${f.file}:${f.line} ${f.name} ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it('the measure sees declarations, arrows, methods and the reason comment', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `export function a() {\n${body(3)}\n}`,
      `const b = async (x: number) => {\n${body(1)}\n};`,
      `const o = { c() {\n${body(2)}\n}, d: function () {\n${body(0)}\n} };`,
      `class K { get e() {\n${body(0)}\n  return 1;\n} }`,
      `/** Doc. */\n// long: a flat table\nexport const f = () => {\n${body(1)}\n};`,
      `function g(): void;`,
    ].join('\n');
    const got = measure('x.ts', text).map((f) => [f.name, f.lines, f.reasoned]);
    expect(got).toEqual([
      ['a', 5, false],
      ['b', 3, false],
      ['c', 4, false],
      ['d', 3, false],
      ['e', 4, false],
      ['f', 3, true],
    ]);
  });
});
