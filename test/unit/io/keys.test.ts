import { createPrivateKey, sign } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyAsync } from '@noble/ed25519';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signReceipt } from '../../../core/receipt.ts';
import {
  jwkThumbprint,
  KeyStoreError,
  loadSigningKeys,
  readJwks,
  rotateSigningKey,
} from '../../../io/keys.ts';
import { verifyReceipt } from '../../../verify/verify.ts';

const RFC8032 = JSON.parse(
  await readFile(join(import.meta.dirname, '../../vectors/rfc8032/rfc8032-ed25519.json'), 'utf8'),
) as { priv: string; pub: string; msg: string; sig: string }[];
const PKCS8_ED25519_PREFIX = '302e020100300506032b657004220420'; // RFC 8410 PrivateKeyInfo header for a 32-byte seed

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spotcheck-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('jwkThumbprint (RFC 7638)', () => {
  it('gives the thumbprint RFC 8037 Appendix A.3 states for its Ed25519 key', () => {
    expect(jwkThumbprint('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo')).toBe(
      'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
    );
  });
});

describe('RFC 8032 §7.1 vectors through node:crypto', () => {
  it.each(RFC8032.map((v, i) => [i, v] as const))(
    'vector %i: node signs byte-for-byte, noble verifies',
    async (i, v) => {
      const key = createPrivateKey({
        key: Buffer.from(PKCS8_ED25519_PREFIX + v.priv, 'hex'),
        format: 'der',
        type: 'pkcs8',
      });
      const msg = Buffer.from(v.msg, 'hex');
      const signature = sign(null, msg, key);
      expect(signature.toString('hex'), `RFC 8032 vector ${i}`).toBe(v.sig);
      expect(await verifyAsync(signature, msg, Buffer.from(v.pub, 'hex')), `RFC 8032 vector ${i}`).toBe(true);
    },
  );
});

describe('loadSigningKeys', () => {
  it('creates a key on first start (PKCS#8 PEM, mode 0600) and publishes it in jwks.json', async () => {
    const { signer, jwks } = await loadSigningKeys({ dir });
    const pem = await readFile(join(dir, 'signing-key.pem'), 'utf8');
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect((await stat(join(dir, 'signing-key.pem'))).mode & 0o777).toBe(0o600);
    expect(jwks.keys).toHaveLength(1);
    const [jwk] = jwks.keys;
    expect(jwk).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.stringMatching(/^[\w-]{43}$/),
      kid: signer.kid,
      alg: 'EdDSA',
      use: 'sig',
    });
    expect(signer.kid).toBe(jwkThumbprint(jwk?.x ?? ''));
    expect(await readJwks(dir)).toEqual(jwks);
  });

  it('reloads the same key on the next start', async () => {
    const first = await loadSigningKeys({ dir });
    const pem = await readFile(join(dir, 'signing-key.pem'), 'utf8');
    const second = await loadSigningKeys({ dir });
    expect(second.signer.kid).toBe(first.signer.kid);
    expect(second.jwks.keys).toHaveLength(1);
    expect(await readFile(join(dir, 'signing-key.pem'), 'utf8')).toBe(pem);
  });

  it('agrees on one key when two starts race', async () => {
    const [a, b] = await Promise.all([loadSigningKeys({ dir }), loadSigningKeys({ dir })]);
    expect(a.signer.kid).toBe(b.signer.kid);
    expect((await readJwks(dir)).keys.map((k) => k.kid)).toEqual([a.signer.kid]);
  });

  it('signs with node; @noble/ed25519 verifies; a changed byte fails', async () => {
    const { signer, jwks } = await loadSigningKeys({ dir });
    const message = new TextEncoder().encode('{"id":"sc-x"}');
    const signature = signer.sign(message);
    expect(signature).toHaveLength(64);
    const x = Buffer.from(jwks.keys[0]?.x ?? '', 'base64url');
    expect(await verifyAsync(signature, message, x)).toBe(true);
    message.set([(message[2] ?? 0) ^ 1], 2);
    expect(await verifyAsync(signature, message, x)).toBe(false);
  });

  it('uses SIGNING_KEY_FILE without writing it, and publishes its public key', async () => {
    const seed = RFC8032[0]?.priv ?? '';
    const pem = createPrivateKey({
      key: Buffer.from(PKCS8_ED25519_PREFIX + seed, 'hex'),
      format: 'der',
      type: 'pkcs8',
    })
      .export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const keyFile = join(dir, 'external.pem');
    await writeFile(keyFile, pem, { mode: 0o400 });
    const { signer, jwks } = await loadSigningKeys({ dir: join(dir, 'keys'), keyFile });
    // RFC 8037 Appendix A uses the RFC 8032 TEST 1 key.
    expect(signer.kid).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
    expect(jwks.keys[0]?.x).toBe('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo');
    expect(await readFile(keyFile, 'utf8')).toBe(pem);
    await expect(stat(join(dir, 'keys', 'signing-key.pem'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses a key file that is not an Ed25519 key, without echoing its content', async () => {
    const keyFile = join(dir, 'bad.pem');
    await writeFile(keyFile, '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n-----END PRIVATE KEY-----\n');
    const attempt = loadSigningKeys({ dir, keyFile });
    await expect(attempt).rejects.toBeInstanceOf(KeyStoreError);
    await expect(attempt).rejects.not.toThrow(/c2VjcmV0/);
  });

  it('never exposes the private key through the signer', async () => {
    const { signer } = await loadSigningKeys({ dir });
    const pemBody = (await readFile(join(dir, 'signing-key.pem'), 'utf8')).split('\n')[1] ?? '';
    expect(JSON.stringify(signer)).not.toContain(pemBody);
    expect(Object.keys(signer).sort()).toEqual(['kid', 'sign']);
  });
});

describe('rotateSigningKey', () => {
  it('keeps the retired key in the JWKS; new receipts use the new kid; old receipts still verify', async () => {
    const before = await loadSigningKeys({ dir });
    const oldReceipt = signReceipt({ id: 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa', verdict: 'pay' }, before.signer);

    const { previousKid, kid } = await rotateSigningKey(dir);
    expect(previousKid).toBe(before.signer.kid);
    expect(kid).not.toBe(previousKid);

    const after = await loadSigningKeys({ dir });
    expect(after.signer.kid).toBe(kid);
    expect(after.jwks.keys.map((k) => k.kid)).toEqual([previousKid, kid]);
    expect(after.jwks.keys.every((k) => k.use === 'sig' && k.alg === 'EdDSA')).toBe(true);

    const newReceipt = signReceipt({ id: 'sc-eaaaaaaaaaaaaaaaaaaaaaaaaa', verdict: 'skip' }, after.signer);
    expect(newReceipt.kid).toBe(kid);
    expect(await verifyReceipt(oldReceipt, after.jwks)).toEqual({ ok: true, kid: previousKid });
    expect(await verifyReceipt(newReceipt, after.jwks)).toEqual({ ok: true, kid });
    expect((await stat(join(dir, 'signing-key.pem'))).mode & 0o777).toBe(0o600);
  });

  it('creates a first key when there was none', async () => {
    const { previousKid, kid } = await rotateSigningKey(dir);
    expect(previousKid).toBeNull();
    expect((await loadSigningKeys({ dir })).signer.kid).toBe(kid);
  });
});
