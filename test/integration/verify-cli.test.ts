import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newReceiptId, signReceipt } from '../../core/receipt.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { readReceiptFile, writeReceiptFile } from '../../io/receipts/files.ts';
import { verifyReceipt } from '../../verify/verify.ts';

const ROOT = join(import.meta.dirname, '../..');
const GOLDEN = join(ROOT, 'test/vectors/receipts/check-receipt.golden.json');
const RFC8037_JWKS = {
  keys: [
    {
      kty: 'OKP',
      crv: 'Ed25519',
      x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
      kid: 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
      alg: 'EdDSA',
      use: 'sig',
    },
  ],
};

type Run = { code: number; stdout: string; stderr: string };
function verifyCli(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      ['verify/cli.ts', ...args],
      { cwd: ROOT },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let work: string;
let receiptsDir: string;
let jwksPath: string;
let ids: string[];
let kid: string;
let server: Server;
let origin: string;
/** A receipt file naming its own `receipt_url` on the test server, and its id. */
let namedFile: string;
let namedId: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'spotcheck-verify-'));
  receiptsDir = join(work, 'receipts');
  const { signer, jwks } = await loadSigningKeys({ dir: join(work, 'keys') });
  kid = signer.kid;
  jwksPath = join(work, 'jwks.json');
  await writeFile(jwksPath, JSON.stringify(jwks));
  const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));
  ids = [];
  for (const verdict of ['pay', 'skip', 'recheck']) {
    const id = newReceiptId('sc-', random);
    ids.push(id);
    await writeReceiptFile(
      receiptsDir,
      signReceipt({ id, verdict, quoted_price_usd: 0.02, note: 'naïve ✓' }, signer),
    );
  }
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    const file =
      path === '/.well-known/jwks.json' ? jwksPath : join(receiptsDir, `${path.replace(/^\/r\//, '')}.json`);
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  namedId = newReceiptId('sc-', random);
  const namedDir = join(work, 'named');
  await writeReceiptFile(
    namedDir,
    signReceipt({ id: namedId, verdict: 'pay', receipt_url: `${origin}/v1/receipts/${namedId}` }, signer),
  );
  namedFile = join(namedDir, `${namedId}.json`);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(work, { recursive: true, force: true });
});

describe('npm run verify (verify/cli.ts)', () => {
  it('verifies receipt files signed by io/keys: OK per receipt, exit 0', async () => {
    const files = ids.slice(0, 2).map((id) => join(receiptsDir, `${id}.json`));
    const run = await verifyCli(...files, '--jwks', jwksPath);
    // The keys named once, then each receipt with the file it was read from.
    expect(run.stdout).toBe(
      `keys ${jwksPath}\n${ids
        .slice(0, 2)
        .map((id) => `OK  ${id}  kid=${kid}  ${join(receiptsDir, `${id}.json`)}\n`)
        .join('')}`,
    );
    expect(run.code).toBe(0);
  });

  it('verifies every *.json of a directory', async () => {
    const run = await verifyCli(receiptsDir, '--jwks', jwksPath);
    expect(run.stdout.trim().split('\n').sort()).toEqual(
      [
        `keys ${jwksPath}`,
        ...ids.map((id) => `OK  ${id}  kid=${kid}  ${join(receiptsDir, `${id}.json`)}`),
      ].sort(),
    );
    expect(run.code).toBe(0);
  });

  it('fails a receipt with one character changed: FAIL, exit 1, the others still OK', async () => {
    const tamperedDir = join(work, 'tampered');
    await mkdir(tamperedDir, { recursive: true });
    const [good, bad] = ids;
    await copyFile(join(receiptsDir, `${good}.json`), join(tamperedDir, 'a.json'));
    const text = await readFile(join(receiptsDir, `${bad}.json`), 'utf8');
    const changed = text.replace('"quoted_price_usd": 0.02', '"quoted_price_usd": 0.03');
    expect(changed).not.toBe(text);
    await writeFile(join(tamperedDir, 'b.json'), changed);
    const run = await verifyCli(tamperedDir, '--jwks', jwksPath);
    expect(run.stdout).toBe(
      `keys ${jwksPath}\nOK  ${good}  kid=${kid}  ${join(tamperedDir, 'a.json')}\nFAIL ${bad}: bad_signature  ${join(tamperedDir, 'b.json')}\n`,
    );
    expect(run.code).toBe(1);
  });

  it('reports a receipt signed by an unknown key, an unsigned one and unreadable JSON', async () => {
    const dir = join(work, 'odd');
    await mkdir(dir, { recursive: true });
    await copyFile(GOLDEN, join(dir, '1-golden.json')); // signed by the RFC 8037 test key, not ours
    await writeFile(join(dir, '2-unsigned.json'), JSON.stringify({ id: 'sc-old', verdict: 'skip' }));
    await writeFile(join(dir, '3-broken.json'), '{"id":');
    const run = await verifyCli(dir, '--jwks', jwksPath);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe(`keys ${jwksPath}`);
    expect(lines[1]).toBe(`FAIL sc-k3q7yzv2m4n5p6rstuwxbcdefa: unknown_kid  ${join(dir, '1-golden.json')}`);
    expect(lines[2]).toBe(`FAIL sc-old: unsigned  ${join(dir, '2-unsigned.json')}`);
    expect(lines[3]).toMatch(/^FAIL .*3-broken\.json: unreadable \(/);
    expect(run.code).toBe(1);
  });

  it('refuses a receipt file that names a member twice, whichever copy the signature covers', async () => {
    // JSON.parse keeps the last copy, so the signature verifies while a reader (or another parser) that takes the
    // first copy sees `skip`: one file, two receipts. Nested objects and escaped names count too.
    const dir = join(work, 'duplicates');
    await mkdir(dir, { recursive: true });
    const [id = ''] = ids;
    const text = await readFile(join(receiptsDir, `${id}.json`), 'utf8');
    const files = {
      'a-top.json': text.replace(/^\{/, '{\n  "verdict": "skip",'),
      'b-escaped.json': text.replace(/^\{/, '{\n  "verdic\\u0074": "skip",'),
      'c-nested.json': text.replace(/^\{/, '{\n  "extra": { "a": 1, "b": [{ "a": 1 }], "a": 2 },'),
    };
    for (const [name, content] of Object.entries(files)) {
      expect(content).not.toBe(text);
      await writeFile(join(dir, name), content);
    }
    const jwks = join(work, 'jwks-dup.json');
    await writeFile(jwks, (await readFile(jwksPath, 'utf8')).replace(/^\{/, '{"keys":[],'));
    const run = await verifyCli(dir, '--jwks', jwksPath);
    expect(run.stdout).toBe(
      [
        `FAIL ${join(dir, 'a-top.json')}: duplicate_member "verdict" (a receipt names each member once)`,
        `FAIL ${join(dir, 'b-escaped.json')}: duplicate_member "verdict" (a receipt names each member once)`,
        `FAIL ${join(dir, 'c-nested.json')}: duplicate_member "a" (a receipt names each member once)`,
        '',
      ].join('\n'),
    );
    expect(run.code).toBe(1);
    // The keys document too: the one the verifier reads must be the one everyone reads.
    const keys = await verifyCli(join(receiptsDir, `${id}.json`), '--jwks', jwks);
    expect(keys.stdout).toMatch(/^keys .*\nFAIL .*: keys unavailable from .*duplicate member "keys"/);
    expect(keys.code).toBe(1);
  });

  it('accepts the golden receipt with the RFC 8037 key', async () => {
    const jwks = join(work, 'rfc8037-jwks.json');
    await writeFile(jwks, JSON.stringify(RFC8037_JWKS));
    const run = await verifyCli(GOLDEN, '--jwks', jwks);
    expect(run.stdout).toBe(
      `keys ${jwks}\nOK  sc-k3q7yzv2m4n5p6rstuwxbcdefa  kid=kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k  ${GOLDEN}\n`,
    );
    expect(run.code).toBe(0);
  });

  it('fetches a receipt URL and defaults the keys to <origin>/.well-known/jwks.json', async () => {
    const run = await verifyCli(`${origin}/r/${ids[2]}`);
    expect(run.stdout).toBe(
      `keys ${origin}/.well-known/jwks.json\nOK  ${ids[2]}  kid=${kid}  ${origin}/r/${ids[2]}\n`,
    );
    expect(run.code).toBe(0);
  });

  it('takes the keys from --base-url for files', async () => {
    const run = await verifyCli(join(receiptsDir, `${ids[0]}.json`), '--base-url', origin);
    expect(run.stdout).toBe(
      `keys ${origin}/.well-known/jwks.json\nOK  ${ids[0]}  kid=${kid}  ${join(receiptsDir, `${ids[0]}.json`)}\n`,
    );
    expect(run.code).toBe(0);
  });

  it('takes the keys of a file from the origin its receipt_url names, and says so', async () => {
    const run = await verifyCli(namedFile);
    expect(run.stdout).toBe(
      `keys ${origin}/.well-known/jwks.json (the origin the receipt names: it shows who signed, not whom to trust)\nOK  ${namedId}  kid=${kid}  ${namedFile}\n`,
    );
    expect(run.code).toBe(0);
  });

  it('fails (exit 1) a file that names no receipt_url when no keys are given', async () => {
    const file = join(receiptsDir, `${ids[0]}.json`);
    const run = await verifyCli(file);
    expect(run.stdout).toBe(
      `FAIL ${ids[0]}: no keys: give --jwks or --base-url (the receipt names no receipt_url)  ${file}\n`,
    );
    expect(run.code).toBe(1);
  });

  it('fails (exit 1) when the keys cannot be fetched', async () => {
    const run = await verifyCli(`${origin}/r/${ids[0]}`, '--jwks', `${origin}/missing.json`);
    expect(run.stdout).toMatch(/^keys .*\nFAIL .*: keys unavailable from .*HTTP 404/);
    expect(run.code).toBe(1);
  });

  it.each([
    [['--jwks', 'x.json'], /no receipt given/],
    [['a.json', '--jwks'], /--jwks needs a value/],
    [['a.json', '--frobnicate'], /unknown option/],
  ])('exits 2 on a usage error: %j', async (args, message) => {
    const run = await verifyCli(...args);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/usage:/);
    expect(run.code).toBe(2);
  });
});

describe('receipt files (io/receipts/files.ts)', () => {
  it('writes JSON.stringify(receipt, null, 2) atomically and reads it back', async () => {
    const id = ids[0] ?? '';
    const text = await readFile(join(receiptsDir, `${id}.json`), 'utf8');
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(await readReceiptFile(receiptsDir, id)).toEqual(JSON.parse(text));
    expect((await readdir(receiptsDir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('returns null for unknown ids and never touches paths outside the directory', async () => {
    await writeFile(join(work, 'secret.json'), '{"secret":true}');
    expect(await readReceiptFile(receiptsDir, 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa')).toBeNull();
    expect(await readReceiptFile(receiptsDir, '../secret')).toBeNull();
    expect(await readReceiptFile(join(receiptsDir, 'x'), '../../secret')).toBeNull();
    await expect(writeReceiptFile(receiptsDir, { id: '../evil' })).rejects.toThrow(TypeError);
    expect(readFileSync(join(work, 'secret.json'), 'utf8')).toBe('{"secret":true}');
  });
});

describe('verifyReceipt (verify/verify.ts)', () => {
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, unknown>;
  const key = RFC8037_JWKS.keys[0];
  const sig = golden['signature'] as string;

  it('accepts the golden receipt', async () => {
    expect(await verifyReceipt(golden, RFC8037_JWKS)).toEqual({ ok: true, kid: key?.kid });
  });

  it.each([
    ['a non-object', 'text', RFC8037_JWKS, 'not_an_object'],
    ['an array', [golden], RFC8037_JWKS, 'not_an_object'],
    ['no signature', { ...golden, signature: undefined }, RFC8037_JWKS, 'unsigned'],
    ['no kid', { ...golden, kid: 7 }, RFC8037_JWKS, 'missing_kid'],
    ['padded base64', { ...golden, signature: `${sig}==` }, RFC8037_JWKS, 'bad_signature_encoding'],
    [
      'standard base64 characters',
      { ...golden, signature: `+${sig.slice(1)}` },
      RFC8037_JWKS,
      'bad_signature_encoding',
    ],
    [
      'non-canonical trailing bits',
      { ...golden, signature: `${sig.slice(0, -1)}B` },
      RFC8037_JWKS,
      'bad_signature_encoding',
    ],
    [
      'a 63-byte signature',
      { ...golden, signature: sig.slice(0, 84) },
      RFC8037_JWKS,
      'bad_signature_encoding',
    ],
    ['a JWKS without keys', golden, { keys: 'none' }, 'bad_jwks'],
    ['no JWKS', golden, null, 'bad_jwks'],
    ['an unknown kid', { ...golden, kid: 'other' }, RFC8037_JWKS, 'unknown_kid'],
    ['a key of another curve', golden, { keys: [{ ...key, crv: 'X25519' }] }, 'bad_key'],
    ['a short x', golden, { keys: [{ ...key, x: 'AAAA' }] }, 'bad_key'],
    [
      'a kid that is not the key thumbprint',
      golden,
      { keys: [{ ...key, x: `A${key?.x.slice(1)}` }] },
      'kid_not_thumbprint',
    ],
    ['a lone surrogate in the receipt', { ...golden, note: '\uD800' }, RFC8037_JWKS, 'not_canonicalizable'],
    ['a changed member', { ...golden, verdict: 'skip' }, RFC8037_JWKS, 'bad_signature'],
    ['an added member', { ...golden, extra: 1 }, RFC8037_JWKS, 'bad_signature'],
  ])('fails, without throwing, on %s', async (_what, receipt, jwks, reason) => {
    expect(await verifyReceipt(receipt, jwks)).toMatchObject({ ok: false, reason });
  });
});
