/**
 * The layers of the house (docs/architecture.md "Rules of the house", CONTRIBUTING): `core/` is pure (no `node:` modules, no I/O
 * packages, nothing outside `core/`), `io/` never reaches up into `api/` or `crawl/`, `api/` and `crawl/` never
 * import each other, `site/` reads only `core/`, `io/` and `verify/`, and `verify/` uses packages only. No module
 * takes part in an import cycle (type-only imports count), and no exported name is defined by two modules. Read
 * from the source files themselves, so a wrong arrow fails here, for everyone.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

/** The product folders: their modules are the nodes of the import graph and the owners of exported names. */
const PRODUCT = ['core', 'io', 'api', 'crawl', 'site', 'verify', 'sandbox'];

/**
 * Packages `core/` may use: pure computation only. A new one is a decision, made here on purpose. Not `viem` nor
 * `@x402/evm`: each loads hundreds of modules on every thread that checks an endpoint (`core/_sdk-networks.ts`).
 */
const CORE_PACKAGES = ['valibot', '@noble/hashes', '@noble/ed25519', '@x402/core', 'ox', 'canonicalize'];

/**
 * The folders of ours each layer may import (besides packages), as CONTRIBUTING's layout table says; `data/` is
 * checked-in data (tasks, setup-pack content). A layer not named here (sandbox, bench, scripts, test) may import
 * anything.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: ['core'],
  io: ['core', 'io', 'data'],
  api: ['core', 'io', 'api', 'verify', 'data'],
  crawl: ['core', 'io', 'crawl', 'data'],
  site: ['core', 'io', 'site', 'verify', 'data'],
  verify: ['verify'],
};

/**
 * Exported names two modules may both define, each with the reason two is right. Keep it empty unless a framework
 * or a published format fixes the name twice.
 */
const SHARED_NAMES: Record<string, string> = {};

/**
 * Modules whose exported names a framework fixes: Astro's endpoints under `site/pages/` each export `GET` and
 * `getStaticPaths`, and nothing imports them by name.
 */
function namedByFramework(file: string): boolean {
  return relative(ROOT, file).startsWith('site/pages/');
}

/** Every module specifier a file imports or re-exports, static or dynamic, type-only included. */
function specifiersOf(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/g,
    /(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns)
    for (const match of source.matchAll(pattern)) found.push(match[1] as string);
  return found;
}

/** The layer a specifier of `file` lands in: a top-level folder for relative ones, else the package name. */
function target(file: string, specifier: string): { layer: string } | { pkg: string } {
  if (specifier.startsWith('.'))
    return { layer: relative(ROOT, resolve(dirname(file), specifier)).split('/')[0] as string };
  const parts = specifier.split('/');
  return { pkg: specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string) };
}

/** What is wrong with the imports of one file of `layer`, as readable lines. */
function violations(layer: string, file: string, source: string): string[] {
  const out: string[] = [];
  const allowed = MAY_IMPORT[layer];
  for (const specifier of specifiersOf(source)) {
    const t = target(file, specifier);
    const where = `${relative(ROOT, file)} imports ${specifier}`;
    if ('layer' in t && allowed !== undefined && !allowed.includes(t.layer))
      out.push(`${where}: ${layer}/ imports only ${allowed.map((l) => `${l}/`).join(', ')}`);
    if (layer === 'core' && 'pkg' in t && !CORE_PACKAGES.includes(t.pkg))
      out.push(`${where}: core/ is pure (no I/O, no node: modules)`);
  }
  return out;
}

function filesOf(dir: string, extensions = ['.ts']): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && extensions.some((ext) => entry.name.endsWith(ext)))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every product module, `.astro` components and pages included (their imports are arrows too). */
function productFiles(): string[] {
  return PRODUCT.flatMap((layer) => filesOf(join(ROOT, layer), ['.ts', '.mts', '.astro']));
}

/**
 * The module graph: each file's relative imports resolved to files. A specifier that names no file is kept as is,
 * so a cycle through it still shows.
 */
function graphOf(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, source] of sources) {
    const next = specifiersOf(source)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolve(dirname(file), specifier));
    graph.set(file, [...new Set(next)]);
  }
  return graph;
}

/** Each import cycle of `graph` once, as the files around it (Tarjan's strongly connected components). */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next))
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.reverse());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** The script parts of a file: all of a `.ts` file; the frontmatter and `<script>` blocks of an `.astro` one. */
function scriptOf(file: string, text: string): string {
  if (!file.endsWith('.astro')) return text;
  const parts = [/^---\n([\s\S]*?)\n---/.exec(text)?.[1] ?? ''];
  for (const match of text.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)) parts.push(match[1] as string);
  return parts.join('\n');
}

/** The names a module defines and exports (re-exports of another module's names are not definitions). */
function exportedNames(file: string, text: string): string[] {
  const source = ts.createSourceFile(
    file,
    scriptOf(file, text),
    ts.ScriptTarget.Latest,
    false,
    ts.ScriptKind.TS,
  );
  const imported = new Set<string>();
  const local: string[] = [];
  const exported: string[] = [];
  const isExported = (node: ts.Node): boolean =>
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.name) imported.add(clause.name.text);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) imported.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings))
        for (const el of bindings.elements) imported.add(el.name.text);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations)
        if (ts.isIdentifier(declaration.name))
          (isExported(statement) ? exported : local).push(declaration.name.text);
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name !== undefined
    ) {
      (isExported(statement) ? exported : local).push(statement.name.text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier === undefined) {
      const clause = statement.exportClause;
      if (clause && ts.isNamedExports(clause))
        for (const el of clause.elements)
          if (!imported.has((el.propertyName ?? el.name).text)) exported.push(el.name.text);
    }
  }
  return [...new Set(exported.filter((name) => name !== 'default'))];
}

/** Each exported name defined by more than one module and not in {@link SHARED_NAMES}, with its modules. */
function duplicateNames(sources: ReadonlyMap<string, string>): string[] {
  const owners = new Map<string, string[]>();
  for (const [file, text] of sources) {
    if (namedByFramework(file)) continue;
    for (const name of exportedNames(file, text)) owners.set(name, [...(owners.get(name) ?? []), file]);
  }
  return [...owners]
    .filter(([name, files]) => files.length > 1 && !(name in SHARED_NAMES))
    .map(([name, files]) => `${name}: ${files.map((f) => relative(ROOT, f)).join(', ')}`)
    .sort();
}

function readAll(files: readonly string[]): Map<string, string> {
  return new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));
}

describe('layers', () => {
  it.each(['core', 'io', 'api', 'crawl', 'site', 'verify'])(
    '%s/ imports only what its layer may',
    (layer) => {
      const files = filesOf(join(ROOT, layer), ['.ts', '.mts', '.astro']);
      expect(files.length).toBeGreaterThan(0);
      const wrong = files.flatMap((file) =>
        violations(layer, file, scriptOf(file, readFileSync(file, 'utf8'))),
      );
      expect(wrong).toEqual([]);
    },
  );

  it('no import cycle, type-only imports included', () => {
    const cycles = cyclesOf(graphOf(readAll(productFiles())));
    expect(cycles.map((cycle) => cycle.map((file) => relative(ROOT, file)).join(' → '))).toEqual([]);
  });

  it('every exported name is defined by one module', () => {
    expect(duplicateNames(readAll(productFiles()))).toEqual([]);
    for (const name of Object.keys(SHARED_NAMES)) expect(SHARED_NAMES[name]).toMatch(/\S/);
  });

  it('every specifier of ours names a file that exists', () => {
    const sources = readAll(productFiles());
    const missing = [...graphOf(sources)].flatMap(([file, next]) =>
      next.filter((to) => !existsSync(to)).map((to) => `${relative(ROOT, file)} → ${relative(ROOT, to)}`),
    );
    expect(missing).toEqual([]);
  });

  it('the check itself catches each wrong arrow', () => {
    const at = (layer: string) => join(ROOT, layer, 'x.ts');
    expect(violations('core', at('core'), "import { readFile } from 'node:fs/promises';")).toHaveLength(1);
    expect(violations('core', at('core'), "import type { Store } from '../io/store/port.ts';")).toHaveLength(
      1,
    );
    expect(violations('core', at('core'), "const m = await import('@duckdb/node-api');")).toHaveLength(1);
    expect(violations('api', at('api'), "export { runCrawl } from '../crawl/run.ts';")).toHaveLength(1);
    expect(violations('crawl', at('crawl'), "import '../api/service.ts';")).toHaveLength(1);
    expect(
      violations('crawl', join(ROOT, 'crawl/sources/x.ts'), "import { x } from '../../api/a.ts';"),
    ).toHaveLength(1);
    expect(violations('io', at('io'), "import { a } from '../api/config.ts';")).toHaveLength(1);
    expect(
      violations('core', at('core'), "import * as v from 'valibot';\nimport { a } from './amount.ts';"),
    ).toEqual([]);
  });

  it('the check itself catches a wrong arrow from site/ or verify/', () => {
    const page = join(ROOT, 'site/pages/x.astro');
    expect(
      violations('site', join(ROOT, 'site/build.ts'), "import { readConfig } from '../api/config.ts';"),
    ).toHaveLength(1);
    expect(
      violations('site', join(ROOT, 'site/lib/x.ts'), "import type { Run } from '../../crawl/run.ts';"),
    ).toHaveLength(1);
    const astro =
      "---\nimport Base from '../layouts/Base.astro';\n---\n<script>\n  import { a } from '../../api/app.ts';\n</script>";
    expect(violations('site', page, scriptOf(page, astro))).toHaveLength(1);
    expect(violations('site', page, "import { verifyReceipt } from '../../verify/verify.ts';")).toEqual([]);
    expect(
      violations('verify', join(ROOT, 'verify/x.ts'), "import { jcs } from '../core/jcs.ts';"),
    ).toHaveLength(1);
    expect(
      violations('verify', join(ROOT, 'verify/x.ts'), "import type { Receipt } from '../io/x.ts';"),
    ).toHaveLength(1);
    expect(
      violations('verify', join(ROOT, 'verify/x.ts'), "import { canonicalize } from './strict-json.ts';"),
    ).toEqual([]);
  });

  it('the check itself catches a cycle, type-only included', () => {
    const a = join(ROOT, 'core/a.ts');
    const b = join(ROOT, 'core/b.ts');
    const c = join(ROOT, 'core/c.ts');
    const cyclic = new Map([
      [a, "import type { B } from './b.ts';"],
      [b, "import { c } from './c.ts';"],
      [c, "export type { A } from './a.ts';"],
    ]);
    expect(cyclesOf(graphOf(cyclic))).toEqual([[a, b, c]]);
    expect(cyclesOf(graphOf(new Map([[a, "import type { A } from './a.ts';"]])))).toEqual([[a]]);
    const chain = new Map([
      [a, "import { b } from './b.ts';"],
      [b, "import { c } from './c.ts';"],
      [c, ''],
    ]);
    expect(cyclesOf(graphOf(chain))).toEqual([]);
  });

  it('the check itself catches a name defined twice', () => {
    const twice = new Map([
      [join(ROOT, 'core/a.ts'), 'export type Challenge = { a: 1 };'],
      [join(ROOT, 'api/b.ts'), 'type Challenge = { b: 1 };\nexport { Challenge };'],
      [join(ROOT, 'site/pages/x.json.ts'), 'export function GET() {}'],
      [join(ROOT, 'site/pages/y.json.ts'), 'export function GET() {}'],
    ]);
    expect(duplicateNames(twice)).toEqual(['Challenge: core/a.ts, api/b.ts']);
    const reexported = new Map([
      [join(ROOT, 'core/a.ts'), 'export const BASE = 1;'],
      [join(ROOT, 'site/b.ts'), "export { BASE } from '../core/a.ts';"],
      [join(ROOT, 'site/c.ts'), "import { BASE } from '../core/a.ts';\nexport { BASE };"],
    ]);
    expect(duplicateNames(reexported)).toEqual([]);
    const astro = join(ROOT, 'site/components/X.astro');
    expect(exportedNames(astro, '---\nexport const usdText = 1;\n---\n<p/>')).toEqual(['usdText']);
  });
});
