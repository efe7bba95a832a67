/**
 * The Ed25519 signing key and the published keys document (README "Configuration").
 *
 * Layout under `<dataDir>/keys/`: `signing-key.pem` (PKCS#8, mode 0600) and `jwks.json`, which keeps every
 * public key ever used, so receipts signed before a rotation keep verifying. The private key never leaves
 * the closure of the returned signer: it is not logged, returned or serialized.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
} from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import type { Signer } from '../core/receipt.ts';

/** One public key of the JWKS (RFC 8037 OKP key, RFC 7638 thumbprint as `kid`). */
export type Jwk = { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; alg: 'EdDSA'; use: 'sig' };
/** The keys document served at `/.well-known/jwks.json`. */
export type Jwks = { keys: Jwk[] };

const KEY_FILE = 'signing-key.pem';
const JWKS_FILE = 'jwks.json';

const JwkSchema = v.object({
  kty: v.literal('OKP'),
  crv: v.literal('Ed25519'),
  x: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/)),
  kid: v.string(),
  alg: v.literal('EdDSA'),
  use: v.literal('sig'),
});
const JwksSchema = v.object({ keys: v.array(JwkSchema) });

/**
 * RFC 7638 thumbprint of an Ed25519 public key: base64url(SHA-256 of `{"crv":"Ed25519","kty":"OKP","x":…}`),
 * members in lexicographic order, no whitespace (RFC 7638 §3.2, RFC 8037 §2).
 * @example jwkThumbprint('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo') // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k'
 */
export function jwkThumbprint(x: string): string {
  const members = `{"crv":"Ed25519","kty":"OKP","x":${JSON.stringify(x)}}`;
  return createHash('sha256').update(members).digest('base64url');
}

/**
 * Loads the signing key, creating it on first start, and makes sure its public key is in `jwks.json`.
 * With `keyFile` (env `SIGNING_KEY_FILE`) that PEM is used and never written.
 * @example const { signer, jwks } = await loadSigningKeys({ dir: join(dataDir, 'keys') })
 */
export async function loadSigningKeys(options: {
  dir: string;
  keyFile?: string;
}): Promise<{ signer: Signer; jwks: Jwks }> {
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  const privateKey =
    options.keyFile === undefined
      ? await loadOrCreateKey(options.dir)
      : parsePrivateKey(await readFile(options.keyFile, 'utf8'), options.keyFile);
  const jwk = publicJwk(privateKey);
  const jwks = await ensureInJwks(options.dir, jwk);
  return { signer: makeSigner(privateKey, jwk.kid), jwks };
}

/**
 * Replaces the signing key with a new one. The new public key is published in `jwks.json` before the new
 * private key is installed, and the retired public key stays there, so every receipt keeps verifying.
 * Running servers keep the key they loaded until restarted.
 * @example const { previousKid, kid } = await rotateSigningKey(join(dataDir, 'keys'))
 */
export async function rotateSigningKey(dir: string): Promise<{ previousKid: string | null; kid: string }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const previous = await readKeyFile(join(dir, KEY_FILE));
  const previousJwk = previous === null ? null : publicJwk(previous);
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicJwk(privateKey);
  if (previousJwk !== null) await ensureInJwks(dir, previousJwk);
  await ensureInJwks(dir, jwk);
  const tmp = await writeTmp(dir, KEY_FILE, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  await rename(tmp, join(dir, KEY_FILE));
  await syncDir(dir);
  return { previousKid: previousJwk?.kid ?? null, kid: jwk.kid };
}

/**
 * Reads `jwks.json` (empty when absent), e.g. for serving `/.well-known/jwks.json` after a rotation.
 * @example const jwks = await readJwks(join(dataDir, 'keys'))
 */
export async function readJwks(dir: string): Promise<Jwks> {
  let text: string;
  try {
    text = await readFile(join(dir, JWKS_FILE), 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return { keys: [] };
    throw error;
  }
  const parsed = v.safeParse(JwksSchema, JSON.parse(text));
  if (!parsed.success) throw new KeyStoreError(`${join(dir, JWKS_FILE)} is not a valid Ed25519 JWKS`);
  return parsed.output;
}

function makeSigner(privateKey: KeyObject, kid: string): Signer {
  return { kid, sign: (bytes) => new Uint8Array(sign(null, bytes, privateKey)) };
}

function publicJwk(privateKey: KeyObject): Jwk {
  const exported = createPublicKey(privateKey).export({ format: 'jwk' });
  if (exported.crv !== 'Ed25519' || typeof exported.x !== 'string') {
    throw new KeyStoreError('the signing key is not an Ed25519 key');
  }
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: exported.x,
    kid: jwkThumbprint(exported.x),
    alg: 'EdDSA',
    use: 'sig',
  };
}

async function loadOrCreateKey(dir: string): Promise<KeyObject> {
  const path = join(dir, KEY_FILE);
  const existing = await readKeyFile(path);
  if (existing !== null) return existing;
  const { privateKey } = generateKeyPairSync('ed25519');
  const tmp = await writeTmp(dir, KEY_FILE, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  try {
    // link() fails with EEXIST if another process (server and crawl starting together) won the race;
    // then both use the winner's key instead of one silently overwriting the other.
    await link(tmp, path);
    await syncDir(dir);
  } catch (error) {
    if (!isCode(error, 'EEXIST')) throw error;
  } finally {
    await rm(tmp, { force: true });
  }
  const key = await readKeyFile(path);
  if (key === null) throw new KeyStoreError(`${path} vanished while being created`);
  return key;
}

async function readKeyFile(path: string): Promise<KeyObject | null> {
  try {
    return parsePrivateKey(await readFile(path, 'utf8'), path);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return null;
    throw error;
  }
}

function parsePrivateKey(pem: string, path: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (cause) {
    // The message names the file only: the PEM text itself must not end up in logs.
    throw new KeyStoreError(`${path} does not hold a readable private key`, { cause });
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new KeyStoreError(`${path} is not an Ed25519 private key`);
  return key;
}

async function ensureInJwks(dir: string, jwk: Jwk): Promise<Jwks> {
  const jwks = await readJwks(dir);
  if (jwks.keys.some((k) => k.kid === jwk.kid)) return jwks;
  const next: Jwks = { keys: [...jwks.keys, jwk] };
  const tmp = await writeTmp(dir, JWKS_FILE, `${JSON.stringify(next, null, 2)}\n`);
  await rename(tmp, join(dir, JWKS_FILE));
  await syncDir(dir);
  return next;
}

/** Writes and fsyncs a sibling temp file (mode 0600), ready to be renamed or linked into place. */
async function writeTmp(dir: string, name: string, text: string): Promise<string> {
  const tmp = join(dir, `.${name}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`);
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return tmp;
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** A key file or keys document that cannot be used. */
export class KeyStoreError extends Error {
  override name = 'Keys.KeyStoreError';
}
