/**
 * The layers of the house (docs/architecture.md "Rules of the house", CONTRIBUTING): `core/` is pure (no `node:` modules, no I/O
 * packages, nothing outside `core/`), `io/` never reaches up into `api/` or `crawl/`, and `api/` and `crawl/` never
 * import each other. Read from the source files themselves, so a wrong arrow fails here, for everyone.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * Packages `core/` may use: pure computation only. A new one is a decision, made here on purpose. Not `viem` nor
 * `@x402/evm`: each loads hundreds of modules on every thread that checks an endpoint (`core/_sdk-networks.ts`).
 */
const CORE_PACKAGES = ['valibot', '@noble/hashes', '@noble/ed25519', '@x402/core', 'ox', 'canonicalize'];

/** Every module specifier a file imports or re-exports, static or dynamic. */
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
  for (const specifier of specifiersOf(source)) {
    const t = target(file, specifier);
    const where = `${relative(ROOT, file)} imports ${specifier}`;
    if (layer === 'core') {
      if ('layer' in t && t.layer !== 'core') out.push(`${where}: core/ imports only core/`);
      if ('pkg' in t && !CORE_PACKAGES.includes(t.pkg))
        out.push(`${where}: core/ is pure (no I/O, no node: modules)`);
    }
    if ('layer' in t) {
      if (layer === 'api' && t.layer === 'crawl') out.push(`${where}: api/ never imports crawl/`);
      if (layer === 'crawl' && t.layer === 'api') out.push(`${where}: crawl/ never imports api/`);
      if (layer === 'io' && (t.layer === 'api' || t.layer === 'crawl'))
        out.push(`${where}: io/ never imports ${t.layer}/`);
    }
  }
  return out;
}

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('layers', () => {
  it.each(['core', 'io', 'api', 'crawl'])('%s/ imports only what its layer may', (layer) => {
    const files = filesOf(join(ROOT, layer));
    expect(files.length).toBeGreaterThan(0);
    const wrong = files.flatMap((file) => violations(layer, file, readFileSync(file, 'utf8')));
    expect(wrong).toEqual([]);
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
});
