import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../core/jcs.ts';
import {
  badgeSnippets,
  base64url,
  isReceiptId,
  newReceiptId,
  type Signer,
  signedReceiptText,
  signingInput,
  signReceipt,
  signReceiptJson,
} from '../../../core/receipt.ts';
import { verifyReceipt } from '../../../verify/verify.ts';

ed.hashes.sha512 = sha512;

const GOLDEN_PATH = join(import.meta.dirname, '../../vectors/receipts/check-receipt.golden.json');
// RFC 8032 §7.1 TEST 1 seed; its JWK is RFC 8037 Appendix A's.
const SEED = Uint8Array.from(
  Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex'),
);
const KID = 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k';
const JWKS = {
  keys: [
    {
      kty: 'OKP',
      crv: 'Ed25519',
      x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
      kid: KID,
      alg: 'EdDSA',
      use: 'sig',
    },
  ],
};

/** A signer that records what it was asked to sign and returns a recognizable 64-byte value. */
function fakeSigner(): Signer & { seen: Uint8Array[] } {
  const seen: Uint8Array[] = [];
  const sign = (bytes: Uint8Array) => {
    seen.push(bytes);
    return new Uint8Array(64).fill(7);
  };
  return { kid: 'test-kid', seen, sign };
}

describe('newReceiptId / isReceiptId', () => {
  const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

  it('draws 10,000 distinct, well-formed ids of 26 base32 digits', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const id = newReceiptId(i % 2 === 0 ? 'sc-' : 'ps-', random);
      expect(isReceiptId(id), id).toBe(true);
      ids.add(id);
    }
    expect(ids.size).toBe(10_000);
  });

  it('encodes the 128 random bits as RFC 4648 base32, lower-case, unpadded', () => {
    expect(newReceiptId('sc-', () => new Uint8Array(16))).toBe('sc-aaaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(newReceiptId('ps-', () => new Uint8Array(16).fill(255))).toBe('ps-77777777777777777777777774');
    // RFC 4648 §10: BASE32("foobar") = "MZXW6YTBOI======"; the same prefix shows through our 16 bytes.
    const foobar = new Uint8Array(16);
    foobar.set(new TextEncoder().encode('foobar'));
    expect(newReceiptId('sc-', () => foobar).startsWith('sc-mzxw6ytboi')).toBe(true);
  });

  it('refuses a random source that returns the wrong length', () => {
    expect(() => newReceiptId('sc-', () => new Uint8Array(8))).toThrow(RangeError);
  });

  it.each([
    'sc-aaaaaaaaaaaaaaaaaaaaaaaaa', // 25 digits
    'sc-aaaaaaaaaaaaaaaaaaaaaaaaaaa', // 27 digits
    'sc-aaaaaaaaaaaaaaaaaaaaaaaaab', // last digit has non-zero padding bits
    'SC-aaaaaaaaaaaaaaaaaaaaaaaaaa',
    'sc-AAAAAAAAAAAAAAAAAAAAAAAAAA',
    'xx-aaaaaaaaaaaaaaaaaaaaaaaaaa',
    'sc-aaaaaaaaaaaaaaaaaaaaaaaa1a', // 1 is not in the alphabet
    '../../etc/passwd',
    'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa/..',
    'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa\n',
    '',
    42,
    null,
  ])('rejects %j', (value) => {
    expect(isReceiptId(value)).toBe(false);
  });
});

describe('signReceipt / signingInput', () => {
  it('signs the JCS bytes of the receipt with kid and without signature', () => {
    const signer = fakeSigner();
    const signed = signReceipt({ verdict: 'pay', id: 'sc-x', amount: 1.5 }, signer);
    expect(signer.seen).toHaveLength(1);
    expect(new TextDecoder().decode(signer.seen[0])).toBe(
      '{"amount":1.5,"id":"sc-x","kid":"test-kid","verdict":"pay"}',
    );
    expect(signed).toEqual({
      verdict: 'pay',
      id: 'sc-x',
      amount: 1.5,
      kid: 'test-kid',
      signature: base64url(new Uint8Array(64).fill(7)),
    });
    expect(signed.signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(signingInput(signed)).toEqual(signer.seen[0]);
  });

  it('replaces, never signs over, a stale signature or kid in the input', () => {
    const signer = fakeSigner();
    const signed = signReceipt({ id: 'sc-x', kid: 'old', signature: 'old' }, signer);
    expect(new TextDecoder().decode(signer.seen[0])).toBe('{"id":"sc-x","kid":"test-kid"}');
    expect(signed.kid).toBe('test-kid');
  });

  it('refuses a signer that does not return 64 bytes', () => {
    expect(() => signReceipt({ id: 'sc-x' }, { kid: 'k', sign: () => new Uint8Array(63) })).toThrow(
      RangeError,
    );
  });

  it('refuses receipts that are not I-JSON instead of signing rewritten bytes', () => {
    expect(() => signReceipt({ n: Number.NaN }, fakeSigner())).toThrow(TypeError);
  });

  it('base64url matches RFC 4648 §10 test vectors (url alphabet, no padding)', () => {
    const enc = (s: string) => base64url(new TextEncoder().encode(s));
    expect(['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'].map(enc)).toEqual([
      '',
      'Zg',
      'Zm8',
      'Zm9v',
      'Zm9vYg',
      'Zm9vYmE',
      'Zm9vYmFy',
    ]);
    expect(base64url(Uint8Array.of(0xfb, 0xff))).toBe('-_8');
  });
});

describe('signedReceiptText', () => {
  it('gives back the text signReceiptJson made, whatever order the members come in', () => {
    const { receipt, json } = signReceiptJson(
      { verdict: 'pay', id: 'sc-x', note: 'é \u2028', n: 1.5 },
      fakeSigner(),
    );
    const reordered = Object.fromEntries(Object.entries(receipt).reverse());
    expect(Object.keys(reordered)[0]).toBe('signature');
    expect(signedReceiptText(reordered)).toBe(json);
    expect(signedReceiptText(JSON.parse(json))).toBe(json);
  });

  it('is the golden file once parsed, verifiable as it is', async () => {
    const golden = JSON.parse(readFileSync(GOLDEN_PATH, 'utf8')) as Record<string, unknown>;
    const text = signedReceiptText(golden);
    expect(text.endsWith(`,"signature":"${golden.signature}"}`)).toBe(true);
    expect(await verifyReceipt(JSON.parse(text), JWKS)).toEqual({ ok: true, kid: KID });
  });

  it('refuses a receipt without a signature, or with nothing signed', () => {
    expect(() => signedReceiptText({ id: 'sc-x', kid: 'k' })).toThrow(TypeError);
    expect(() => signedReceiptText({ id: 'sc-x', signature: 7 })).toThrow(TypeError);
    expect(() => signedReceiptText({ signature: 's' })).toThrow(TypeError);
  });
});

describe('golden receipt (test/vectors/receipts/check-receipt.golden.json)', () => {
  const text = readFileSync(GOLDEN_PATH, 'utf8');
  const golden = JSON.parse(text) as Record<string, unknown> & { signature: string };

  it('re-signing the unsigned receipt reproduces the file byte for byte', () => {
    const { kid: _kid, signature: _sig, ...unsigned } = golden;
    const signed = signReceipt(unsigned, { kid: KID, sign: (bytes) => ed.sign(bytes, SEED) });
    expect(`${JSON.stringify(signed, null, 2)}\n`).toBe(text);
  });

  it('has a stable signing input', () => {
    expect(canonicalJson(JSON.parse(new TextDecoder().decode(signingInput(golden))))).toBe(
      new TextDecoder().decode(signingInput(golden)),
    );
    expect(new TextDecoder().decode(signingInput(golden))).toMatchInlineSnapshot(
      `"{"asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","badge":{"html":"<a href=\\"https://spotcheck.example/r/sc-k3q7yzv2m4n5p6rstuwxbcdefa\\"><img src=\\"https://spotcheck.example/badge/api.seller.example.svg\\" alt=\\"Spotcheck: pay\\"></a>","markdown":"[![Spotcheck: pay](https://spotcheck.example/badge/api.seller.example.svg)](https://spotcheck.example/r/sc-k3q7yzv2m4n5p6rstuwxbcdefa)"},"check_type":"dry-run","claimed_price_usd":0.01,"confidence":"high","expected_network":"eip155:8453","expected_pay_to":"0x1111111111111111111111111111111111111111","expected_source":"request","history":{"drift":false,"last_changed":null,"observations":3,"stable_for_days":2,"stable_since":"2026-01-13T08:00:00.000Z"},"id":"sc-k3q7yzv2m4n5p6rstuwxbcdefa","issued_at":"2026-01-15T09:30:00.123Z","kid":"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k","network":"eip155:8453","note":"Prüfung – “quoted”   ok 😂","pay_to":"0x1111111111111111111111111111111111111111","pay_to_changed":null,"payment_terms_sha256":null,"probe":{"cache_ttl_s":300,"cached":false,"probed_at":"2026-01-15T09:30:00.000Z"},"quoted_price_usd":0.01,"reason":"price_ok","reason_code":"price_ok","type":"check","url":"https://api.seller.example/weather/paris","verdict":"pay"}"`,
    );
  });

  it('verifies with the independent verifier and fails once a byte changes', async () => {
    expect(await verifyReceipt(golden, JWKS)).toEqual({ ok: true, kid: KID });
    expect(await verifyReceipt({ ...golden, quoted_price_usd: 0.011 }, JWKS)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
  });
});

describe('badgeSnippets', () => {
  const base = { baseUrl: 'https://spotcheck.example/', host: 'api.seller.example', verdict: 'pay' };

  it('links the host badge to the receipt in Markdown and HTML', () => {
    const out = badgeSnippets({
      ...base,
      receiptUrl: 'https://spotcheck.example/r/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa',
    });
    expect(out).toEqual({
      markdown:
        '[![Spotcheck: pay](https://spotcheck.example/badge/api.seller.example.svg)](https://spotcheck.example/r/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa)',
      html: '<a href="https://spotcheck.example/r/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa"><img src="https://spotcheck.example/badge/api.seller.example.svg" alt="Spotcheck: pay"></a>',
    });
  });

  it('escapes hostile values for each context', () => {
    const out = badgeSnippets({
      baseUrl: 'https://s.example',
      host: 'evil"><script>/x',
      receiptUrl: 'https://s.example/r?a="><b>&c=(1)',
      verdict: '"]<i>',
    });
    expect(out.html).not.toMatch(/<script|<b>|<i>/);
    expect(out.html).toContain('href="https://s.example/r?a=&quot;&gt;&lt;b&gt;&amp;c=(1)"');
    expect(out.html).toContain('src="https://s.example/badge/evil%22%3E%3Cscript%3E%2Fx.svg"');
    expect(out.html).toContain('alt="Spotcheck: &quot;]&lt;i&gt;"');
    expect(out.markdown).toBe(
      '[![Spotcheck: "\\]\\<i\\>](https://s.example/badge/evil%22%3E%3Cscript%3E%2Fx.svg)](https://s.example/r?a="%3E%3Cb%3E&c=%281%29)',
    );
  });

  it.each(['javascript:alert(1)', 'data:text/html,x', 'not a url'])(
    'refuses a %s receipt URL',
    (receiptUrl) => {
      expect(() => badgeSnippets({ ...base, receiptUrl })).toThrow(TypeError);
    },
  );
});
