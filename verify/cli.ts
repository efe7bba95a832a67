/**
 * Receipt verifier for auditors: `npm run verify -- <receipt file|dir|url>... [--jwks <file|url>] [--base-url <url>]`.
 *
 * Prints, per receipt, `OK  <id>  kid=<kid>  <file or URL>` or `FAIL <id>: <reason>  <file or URL>`, and before
 * the first receipt judged with a set of keys, `keys <where from>`. Exit 0 when all pass, 1 when any fails, 2 on a
 * usage error. Keys: `--jwks`, else `<base-url>/.well-known/jwks.json`, else `<origin>/.well-known/jwks.json` of
 * the receipt URL given or, for a file, of the `receipt_url` the receipt names (said so on the `keys` line: such
 * an OK shows who signed it, not that this signer is the one to trust).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuplicateMemberError, parseJsonStrict } from './strict-json.ts';
import { verifyReceipt } from './verify.ts';

const USAGE = `usage: npm run verify -- <receipt file | directory | URL>... [--jwks <file|URL>] [--base-url <URL>]
  A directory means every *.json file in it. Keys: --jwks, else <base-url>/.well-known/jwks.json, else the
  well-known keys of the receipt URL's origin or, for a file, of the origin its receipt_url names.`;
const FETCH_TIMEOUT_MS = 15_000;

type Args = { sources: string[]; jwks: string | null; baseUrl: string | null };
/** A receipt to judge: where it is, and where its keys are (null: from the `receipt_url` it names). */
type Item = { location: string; jwksSource: string | null };
/** What a run shares across receipts: the keys fetched once per source, and whether the source was named yet. */
type Run = { keys: Map<string, Promise<unknown>>; named: Set<string> };

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
  const items: Item[] = [];
  let failures = 0;
  for (const source of args.sources) {
    const expanded = await expand(source);
    if (expanded === null) {
      process.stdout.write(`FAIL ${printable(source)}: no *.json files in this directory\n`);
      failures++;
      continue;
    }
    for (const location of expanded) items.push({ location, jwksSource: keysFor(args, location) });
  }
  const run: Run = { keys: new Map(), named: new Set() };
  for (const item of items) if (!(await judge(item, run))) failures++;
  return failures === 0 ? 0 : 1;
}

/** Where the keys of a receipt at `location` are, when the options or the location say; null: ask the receipt. */
function keysFor(args: Args, location: string): string | null {
  if (args.jwks !== null) return args.jwks;
  if (args.baseUrl !== null) return wellKnownKeys(args.baseUrl);
  return isUrl(location) ? wellKnownKeys(location) : null;
}

function wellKnownKeys(url: string): string {
  return `${new URL(url).origin}/.well-known/jwks.json`;
}

/** Judges one receipt and prints its line; true when it verified. */
async function judge(item: Item, run: Run): Promise<boolean> {
  const receipt = await loadJson(item.location).catch((error: unknown) => new LoadError(error));
  const id = idOf(receipt);
  const where = printable(item.location);
  const fail = (reason: string) => {
    process.stdout.write(
      id === null ? `FAIL ${where}: ${reason}\n` : `FAIL ${printable(id)}: ${reason}  ${where}\n`,
    );
    return false;
  };
  if (receipt instanceof LoadError && receipt.member !== null)
    // Valid JSON that names a member twice: parsers disagree on which copy is the receipt.
    return fail(
      `duplicate_member ${printable(JSON.stringify(receipt.member))} (a receipt names each member once)`,
    );
  if (receipt instanceof LoadError) return fail(`unreadable (${receipt.message})`);
  const named = item.jwksSource === null ? namedOrigin(receipt) : null;
  const source = item.jwksSource ?? named;
  if (source === null) return fail('no keys: give --jwks or --base-url (the receipt names no receipt_url)');
  if (!run.named.has(source)) {
    run.named.add(source);
    const whose =
      named === null ? '' : ' (the origin the receipt names: it shows who signed, not whom to trust)';
    process.stdout.write(`keys ${printable(source)}${whose}\n`);
  }
  let keys = run.keys.get(source);
  if (keys === undefined) {
    keys = loadJson(source).catch((error: unknown) => new LoadError(error));
    run.keys.set(source, keys);
  }
  const jwks = await keys;
  if (jwks instanceof LoadError) return fail(`keys unavailable from ${printable(source)} (${jwks.message})`);
  const result = await verifyReceipt(receipt, jwks);
  if (!result.ok) return fail(result.reason);
  process.stdout.write(`OK  ${printable(id ?? '?')}  kid=${printable(result.kid)}  ${where}\n`);
  return true;
}

/** The well-known keys of the origin the receipt's own `receipt_url` names; null when it names none. */
function namedOrigin(receipt: unknown): string | null {
  const url =
    typeof receipt === 'object' && receipt !== null
      ? (receipt as { receipt_url?: unknown }).receipt_url
      : null;
  return typeof url === 'string' && isUrl(url) ? wellKnownKeys(url) : null;
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
