/**
 * Receipt verifier for auditors: `npm run verify -- <receipt file|dir|url>... [--jwks <file|url>] [--base-url <url>]`.
 *
 * Prints `OK  <id>  kid=<kid>` or `FAIL <id>: <reason>` per receipt. Exit 0 when all pass, 1 when any
 * fails, 2 on a usage error. Keys: `--jwks`, else `<base-url>/.well-known/jwks.json`, else (for a receipt
 * URL) `<origin of the receipt URL>/.well-known/jwks.json`.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuplicateMemberError, parseJsonStrict } from './strict-json.ts';
import { verifyReceipt } from './verify.ts';

const USAGE = `usage: npm run verify -- <receipt file | directory | URL>... [--jwks <file|URL>] [--base-url <URL>]
  A directory means every *.json file in it. Files need --jwks or --base-url; for a receipt URL the keys
  default to <origin>/.well-known/jwks.json.`;
const FETCH_TIMEOUT_MS = 15_000;

type Args = { sources: string[]; jwks: string | null; baseUrl: string | null };
type Item = { label: string; load: () => Promise<unknown>; jwksSource: string };

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (typeof args === 'string') {
    process.stderr.write(`${args}\n${USAGE}\n`);
    return 2;
  }
  const keysFor = (source: string): string | null => {
    if (args.jwks !== null) return args.jwks;
    if (args.baseUrl !== null) return `${args.baseUrl.replace(/\/+$/, '')}/.well-known/jwks.json`;
    return isUrl(source) ? `${new URL(source).origin}/.well-known/jwks.json` : null;
  };
  const items: Item[] = [];
  let failures = 0;
  for (const source of args.sources) {
    const jwksSource = keysFor(source);
    if (jwksSource === null) {
      process.stderr.write(`${source}: a receipt file needs --jwks or --base-url\n${USAGE}\n`);
      return 2;
    }
    const expanded = await expand(source);
    if (expanded === null) {
      process.stdout.write(`FAIL ${printable(source)}: no *.json files in this directory\n`);
      failures++;
      continue;
    }
    for (const entry of expanded) items.push({ label: entry, load: () => loadJson(entry), jwksSource });
  }

  const jwksCache = new Map<string, Promise<unknown>>();
  for (const item of items) {
    const receipt = await item.load().catch((error: unknown) => new LoadError(error));
    const label = printable(idOf(receipt) ?? item.label);
    if (receipt instanceof LoadError && receipt.member !== null) {
      // Valid JSON that names a member twice: parsers disagree on which copy is the receipt.
      const member = printable(JSON.stringify(receipt.member));
      process.stdout.write(`FAIL ${label}: duplicate_member ${member} (a receipt names each member once)\n`);
      failures++;
      continue;
    }
    if (receipt instanceof LoadError) {
      process.stdout.write(`FAIL ${label}: unreadable (${receipt.message})\n`);
      failures++;
      continue;
    }
    let jwksPromise = jwksCache.get(item.jwksSource);
    if (jwksPromise === undefined) {
      jwksPromise = loadJson(item.jwksSource).catch((error: unknown) => new LoadError(error));
      jwksCache.set(item.jwksSource, jwksPromise);
    }
    const jwks = await jwksPromise;
    if (jwks instanceof LoadError) {
      process.stdout.write(`FAIL ${label}: keys unavailable from ${item.jwksSource} (${jwks.message})\n`);
      failures++;
      continue;
    }
    const result = await verifyReceipt(receipt, jwks);
    if (result.ok) {
      process.stdout.write(`OK  ${label}  kid=${printable(result.kid)}\n`);
    } else {
      process.stdout.write(`FAIL ${label}: ${result.reason}\n`);
      failures++;
    }
  }
  return failures === 0 ? 0 : 1;
}

function parseArgs(argv: string[]): Args | string {
  const args: Args = { sources: [], jwks: null, baseUrl: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--jwks' || arg === '--base-url') {
      const value = argv[++i];
      if (value === undefined || value.startsWith('--')) return `${arg} needs a value`;
      if (arg === '--jwks') args.jwks = value;
      else if (isUrl(value)) args.baseUrl = value;
      else return `--base-url must be an http(s) URL: ${value}`;
    } else if (arg.startsWith('--')) {
      return `unknown option ${arg}`;
    } else {
      args.sources.push(arg);
    }
  }
  return args.sources.length === 0 ? 'no receipt given' : args;
}

/** A source as a list of receipt locations; null for a directory without receipts. */
async function expand(source: string): Promise<string[] | null> {
  if (isUrl(source)) return [source];
  const info = await stat(source).catch(() => null);
  if (info === null || !info.isDirectory()) return [source];
  const names = (await readdir(source)).filter((n) => n.endsWith('.json')).sort();
  return names.length === 0 ? null : names.map((n) => join(source, n));
}

async function loadJson(location: string): Promise<unknown> {
  if (isUrl(location)) {
    const response = await fetch(location, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return parseJsonStrict(await response.text());
  }
  return parseJsonStrict(await readFile(location, 'utf8'));
}

function idOf(value: unknown): string | null {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string'
    ? (value as { id: string }).id
    : null;
}

function isUrl(value: string): boolean {
  return /^https?:\/\//i.test(value) && URL.canParse(value);
}

/** Keeps a hostile id from writing terminal control sequences. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

class LoadError {
  readonly message: string;
  /** The repeated member name when the text was valid JSON naming one twice; else null. */
  readonly member: string | null;
  constructor(cause: unknown) {
    this.message = cause instanceof Error ? cause.message : String(cause);
    this.member = cause instanceof DuplicateMemberError ? cause.member : null;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`verify: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
