import { describe, expect, it } from 'vitest';
import { decodeChallenge, MAX_CHALLENGE_CHARS } from '../../../core/challenge.ts';
import type { ChallengeResult, Issue } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import {
  build402,
  buildAccept,
  buildPaymentRequired,
  buildV1Accept,
  buildV1Body,
  buildV2Header,
  PAY_TO,
  RESOURCE_URL,
  toBase64,
  toBase64Url,
} from '../../fixtures/challenge.ts';

function ok(result: ChallengeResult) {
  if (!result.ok) throw new Error(`expected a challenge, got ${JSON.stringify(result)}`);
  return result.value;
}

function issuesOf(result: ChallengeResult): Issue[] {
  if (result.ok || result.kind !== 'invalid')
    throw new Error(`expected invalid, got ${JSON.stringify(result)}`);
  return result.issues;
}

function withAccepts(...accepts: unknown[]) {
  return build402({ headers: { 'payment-required': buildV2Header({ accepts }) } });
}

const SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

describe('decodeChallenge: v2 header', () => {
  it('decodes the SDK-encoded header exactly', () => {
    const value = ok(decodeChallenge(build402()));
    expect(value).toEqual({
      version: 2,
      source: 'header',
      lenient: false,
      notes: [],
      resource: { url: RESOURCE_URL, description: 'Weather', mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: BASE,
          amount: '10000',
          asset: BASE_USDC,
          payTo: PAY_TO,
          maxTimeoutSeconds: 300,
          validBefore: null,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    });
  });

  it('prefers the header over a v1 body', () => {
    const value = ok(
      decodeChallenge(build402({ body: buildV1Body({ accepts: [buildV1Accept({ payTo: '0xbad' })] }) })),
    );
    expect(value.source).toBe('header');
    expect(value.accepts[0]?.payTo).toBe(PAY_TO);
  });

  it('ignores error, extensions and unknown members', () => {
    const header = buildV2Header({
      error: { name: 'ZodError', issues: [] },
      extensions: { bazaar: { info: { input: { type: 'http' } } } },
      somethingNew: true,
    });
    expect(ok(decodeChallenge(build402({ headers: { 'payment-required': header } }))).accepts).toHaveLength(
      1,
    );
  });

  it('repairs a base64url header and says so', () => {
    const json = JSON.stringify(buildPaymentRequired({ resource: { url: 'https://a.example/?x=>>>??' } }));
    const standard = toBase64(json);
    const url = toBase64Url(standard);
    expect(url).toMatch(/[-_]/);
    const value = ok(decodeChallenge(build402({ headers: { 'payment-required': url } })));
    expect(value).toMatchObject({ source: 'header', lenient: true, notes: ['header_base64url'] });
    expect(value.resource?.url).toBe('https://a.example/?x=>>>??');
  });

  it('accepts standard base64 without padding as clean, like the SDK', () => {
    const header = buildV2Header().replace(/=+$/, '');
    const value = ok(decodeChallenge(build402({ headers: { 'payment-required': header } })));
    expect(value.lenient).toBe(false);
  });

  it('repairs whitespace and line breaks in the header', () => {
    const header = buildV2Header();
    const folded = ` ${header.slice(0, 40)}\r\n ${header.slice(40, 90)}\n\t${header.slice(90)} `;
    const value = ok(decodeChallenge(build402({ headers: { 'payment-required': folded } })));
    expect(value).toMatchObject({ lenient: true, notes: ['header_whitespace'] });
  });

  it('notes both repairs when both were needed', () => {
    const url = toBase64Url(toBase64(JSON.stringify(buildPaymentRequired({ error: '???>>>' }))));
    const value = ok(
      decodeChallenge(build402({ headers: { 'payment-required': `${url.slice(0, 10)} ${url.slice(10)}` } })),
    );
    expect(value.notes).toEqual(['header_whitespace', 'header_base64url']);
  });

  it('finds the header whatever the case of its name', () => {
    const value = ok(
      decodeChallenge({ status: 402, headers: { 'PAYMENT-REQUIRED': buildV2Header() }, body: null }),
    );
    expect(value.source).toBe('header');
  });

  it('decodes UTF-8 text in the header', () => {
    const header = buildV2Header({ resource: { url: RESOURCE_URL, description: 'Météo ☀', mimeType: null } });
    expect(ok(decodeChallenge(build402({ headers: { 'payment-required': header } }))).resource).toEqual({
      url: RESOURCE_URL,
      description: 'Météo ☀',
      mimeType: null,
    });
  });

  it('takes a string resource as its URL and tolerates a garbage resource', () => {
    const asString = buildV2Header({ resource: 'https://a.example/x' });
    expect(ok(decodeChallenge(build402({ headers: { 'payment-required': asString } }))).resource).toEqual({
      url: 'https://a.example/x',
      description: null,
      mimeType: null,
    });
    const garbage = buildV2Header({ resource: [1, 2] });
    expect(ok(decodeChallenge(build402({ headers: { 'payment-required': garbage } }))).resource).toBeNull();
    const absent = buildV2Header({ resource: undefined });
    expect(ok(decodeChallenge(build402({ headers: { 'payment-required': absent } }))).resource).toBeNull();
  });

  it('keeps several options in order', () => {
    const value = ok(
      decodeChallenge(
        withAccepts(
          buildAccept({ network: 'eip155:84532', asset: SEPOLIA_USDC }),
          buildAccept(),
          buildAccept({ scheme: 'upto', amount: '20000', maxTimeoutSeconds: undefined, extra: undefined }),
        ),
      ),
    );
    expect(
      value.accepts.map((a) => [a.network, a.scheme, a.amount, a.maxTimeoutSeconds, a.extra === null]),
    ).toEqual([
      ['eip155:84532', 'exact', '10000', 300, false],
      [BASE, 'exact', '10000', 300, false],
      [BASE, 'upto', '20000', null, true],
    ]);
  });

  it('normalizes network spellings', () => {
    const value = ok(
      decodeChallenge(withAccepts(buildAccept({ network: 'EIP155:8453' }), buildAccept({ network: 'base' }))),
    );
    expect(value.accepts.map((a) => a.network)).toEqual([BASE, BASE]);
  });

  it('accepts amount "0" and the largest uint256', () => {
    const max = (2n ** 256n - 1n).toString();
    const value = ok(
      decodeChallenge(withAccepts(buildAccept({ amount: '0' }), buildAccept({ amount: max }))),
    );
    expect(value.accepts.map((a) => a.amount)).toEqual(['0', max]);
  });

  it.each([['0010000'], ['00'], ['9'.repeat(78)], [(2n ** 256n).toString()]])(
    'refuses amount %s: padded, or beyond what a uint256 authorization can carry',
    (amount) => {
      const result = decodeChallenge(withAccepts(buildAccept({ amount })));
      expect(result).toMatchObject({ ok: false, kind: 'invalid' });
    },
  );

  it('accepts null maxTimeoutSeconds and null extra', () => {
    const value = ok(decodeChallenge(withAccepts(buildAccept({ maxTimeoutSeconds: null, extra: null }))));
    expect(value.accepts[0]).toMatchObject({ maxTimeoutSeconds: null, extra: null });
  });
});

describe('decodeChallenge: invalid options (docs/api.md §3.1 rule 5)', () => {
  it.each([
    ['decimal amount', { amount: '0.01' }, 'amount'],
    ['numeric amount', { amount: 10000 }, 'amount'],
    ['negative amount', { amount: '-1' }, 'amount'],
    ['hex amount', { amount: '0x2710' }, 'amount'],
    ['exponent amount', { amount: '1e6' }, 'amount'],
    ['padded amount', { amount: ' 10' }, 'amount'],
    ['empty amount', { amount: '' }, 'amount'],
    ['79-digit amount', { amount: '1'.repeat(79) }, 'amount'],
    ['missing amount', { amount: undefined }, 'amount'],
    ['missing payTo', { payTo: undefined }, 'payTo'],
    ['empty payTo', { payTo: '' }, 'payTo'],
    ['numeric network', { network: 8453 }, 'network'],
    ['missing scheme', { scheme: undefined }, 'scheme'],
    ['missing asset', { asset: undefined }, 'asset'],
    ['huge asset', { asset: 'a'.repeat(300) }, 'asset'],
    ['negative maxTimeoutSeconds', { maxTimeoutSeconds: -1 }, 'maxTimeoutSeconds'],
    ['fractional maxTimeoutSeconds', { maxTimeoutSeconds: 1.5 }, 'maxTimeoutSeconds'],
    ['string maxTimeoutSeconds', { maxTimeoutSeconds: '300' }, 'maxTimeoutSeconds'],
    ['array extra', { extra: ['x'] }, 'extra'],
    ['string extra', { extra: 'USD Coin' }, 'extra'],
  ])('refuses a challenge with a %s', (_name, override, field) => {
    const issues = issuesOf(decodeChallenge(withAccepts(buildAccept(override))));
    expect(issues.map((i) => i.path)).toContain(`header.accepts[0].${field}`);
    for (const i of issues) {
      expect(i.expected).toBeTypeOf('string');
      expect(i.received).toBeTypeOf('string');
      expect(i.message.length).toBeGreaterThan(0);
    }
  });

  it('refuses the whole challenge when only a later option is bad', () => {
    const issues = issuesOf(decodeChallenge(withAccepts(buildAccept(), buildAccept({ amount: '0.5' }))));
    expect(issues).toEqual([
      expect.objectContaining({ path: 'header.accepts[1].amount', received: '"0.5"' }),
    ]);
  });

  it('refuses empty accepts (a sign-in-only route is not payable)', () => {
    const issues = issuesOf(decodeChallenge(withAccepts()));
    expect(issues[0]).toMatchObject({ path: 'header.accepts', message: 'no payment options' });
  });

  it('refuses more than 64 options', () => {
    const accepts = Array.from({ length: 65 }, () => buildAccept());
    expect(issuesOf(decodeChallenge(withAccepts(...accepts)))[0]?.path).toBe('header.accepts');
    expect(ok(decodeChallenge(withAccepts(...accepts.slice(0, 64)))).accepts).toHaveLength(64);
  });

  it('refuses accepts that is not an array and a v1 object in the header', () => {
    const notArray = buildV2Header({ accepts: buildAccept() });
    expect(issuesOf(decodeChallenge(build402({ headers: { 'payment-required': notArray } })))[0]?.path).toBe(
      'header.accepts',
    );
    const v1InHeader = toBase64(buildV1Body());
    expect(
      issuesOf(decodeChallenge(build402({ headers: { 'payment-required': v1InHeader } })))[0],
    ).toMatchObject({
      path: 'header.x402Version',
      received: '1',
    });
  });

  it('keeps received values short', () => {
    const issues = issuesOf(decodeChallenge(withAccepts(buildAccept({ amount: `0.${'1'.repeat(500)}` }))));
    expect(issues[0]?.received.length).toBeLessThanOrEqual(80);
    expect(issues[0]?.message.length).toBeLessThanOrEqual(200);
  });

  it('caps the number of issues', () => {
    const accepts = Array.from({ length: 64 }, () => ({ amount: 1 }));
    const issues = issuesOf(decodeChallenge(withAccepts(...accepts)));
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.length).toBeLessThanOrEqual(32);
  });
});

describe('decodeChallenge: v1 body', () => {
  it('decodes the v1 body of docs/x402.md §2.2', () => {
    const value = ok(decodeChallenge({ status: 402, headers: {}, body: buildV1Body() }));
    expect(value).toEqual({
      version: 1,
      source: 'body',
      lenient: false,
      notes: [],
      resource: { url: 'https://api.example.test/x', description: 'Weather', mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: BASE,
          amount: '10000',
          asset: BASE_USDC,
          payTo: PAY_TO,
          maxTimeoutSeconds: 60,
          validBefore: null,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    });
  });

  it.each([
    ['base', 'eip155:8453'],
    ['base-sepolia', 'eip155:84532'],
    ['Base', 'eip155:8453'],
    ['polygon', 'eip155:137'],
    ['solana', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'],
    ['not-a-chain', 'not-a-chain'],
  ])('maps the v1 network name %s to %s', (name, caip2) => {
    // Solana options need Solana addresses: an EVM address there cannot be signed (core/address.ts).
    const solana = {
      payTo: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      asset: 'So11111111111111111111111111111111111111112',
    };
    const body = buildV1Body({
      accepts: [buildV1Accept({ network: name, ...(name === 'solana' ? solana : {}) })],
    });
    expect(ok(decodeChallenge({ status: 402, headers: {}, body })).accepts[0]?.network).toBe(caip2);
  });

  it('refuses an EVM address on Solana: it cannot be signed there', () => {
    const body = buildV1Body({ accepts: [buildV1Accept({ network: 'solana' })] });
    expect(decodeChallenge({ status: 402, headers: {}, body })).toMatchObject({ ok: false, kind: 'invalid' });
  });

  it('takes the resource from the first option and tolerates missing metadata', () => {
    const body = buildV1Body({
      accepts: [
        buildV1Accept({ resource: 'https://first.example/', description: undefined, mimeType: 7 }),
        buildV1Accept({ resource: 'https://second.example/' }),
      ],
    });
    expect(ok(decodeChallenge({ status: 402, headers: {}, body })).resource).toEqual({
      url: 'https://first.example/',
      description: null,
      mimeType: null,
    });
    const bare = buildV1Body({
      accepts: [buildV1Accept({ resource: undefined, description: undefined, mimeType: undefined })],
    });
    expect(ok(decodeChallenge({ status: 402, headers: {}, body: bare })).resource).toBeNull();
  });

  it('refuses a v1 option that uses the v2 amount field', () => {
    const body = buildV1Body({ accepts: [buildV1Accept({ maxAmountRequired: undefined, amount: '10000' })] });
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body })).map((i) => i.path)).toEqual([
      'body.accepts[0].maxAmountRequired',
    ]);
  });

  it('refuses a decimal maxAmountRequired (never guess units)', () => {
    const body = buildV1Body({ accepts: [buildV1Accept({ maxAmountRequired: '0.01' })] });
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body }))[0]?.path).toBe(
      'body.accepts[0].maxAmountRequired',
    );
  });

  it('refuses a v1 body without accepts', () => {
    const body = JSON.stringify({ x402Version: 1, error: 'X-PAYMENT header is required' });
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body }))[0]?.path).toBe('body.accepts');
  });

  it('reads a body with a byte order mark and leading whitespace', () => {
    expect(ok(decodeChallenge({ status: 402, headers: {}, body: `\uFEFF \n${buildV1Body()}` })).version).toBe(
      1,
    );
  });
});

describe('decodeChallenge: fallbacks', () => {
  it('falls back to a valid v1 body beside a broken header (docs/x402.md §9.2)', () => {
    // The broken header of the pitfall: base64 of a bare accepts array.
    const broken = toBase64(JSON.stringify([buildAccept()]));
    const value = ok(
      decodeChallenge({ status: 402, headers: { 'payment-required': broken }, body: buildV1Body() }),
    );
    expect(value).toMatchObject({
      version: 1,
      source: 'body',
      lenient: true,
      notes: ['header_invalid', 'header_invalid_body_used'],
    });
  });

  it.each([
    ['not base64', '%%%not-base64!!!'],
    ['base64 of non-JSON', toBase64('hello')],
    ['base64 of bad UTF-8', btoa('\xff\xfe{}')],
    ['a bad option', buildV2Header({ accepts: [buildAccept({ amount: '0.01' })] })],
    ['an empty value', ''],
    ['an impossible length', 'abcde'],
  ])('falls back to the body when the header is %s', (_name, header) => {
    const value = ok(
      decodeChallenge({ status: 402, headers: { 'payment-required': header }, body: buildV1Body() }),
    );
    expect(value.notes).toContain('header_invalid');
  });

  it('is invalid when the header is broken and there is no body', () => {
    const issues = issuesOf(
      decodeChallenge({ status: 402, headers: { 'payment-required': '!!!' }, body: null }),
    );
    expect(issues[0]).toMatchObject({ path: 'header', expected: 'base64 (RFC 4648)', received: '!!!' });
  });

  it('is invalid when the header is broken and the body is not x402', () => {
    const result = decodeChallenge({
      status: 402,
      headers: { 'payment-required': toBase64('{') },
      body: '<html></html>',
    });
    expect(issuesOf(result)[0]?.message).toBe('decoded header is not JSON');
  });

  it('reports header and body issues together when both are broken', () => {
    const body = buildV1Body({ accepts: [buildV1Accept({ payTo: undefined })] });
    const header = buildV2Header({ accepts: [buildAccept({ amount: -1 })] });
    const paths = issuesOf(
      decodeChallenge({ status: 402, headers: { 'payment-required': header }, body }),
    ).map((i) => i.path);
    expect(paths).toEqual(['header.accepts[0].amount', 'body.accepts[0].payTo']);
  });

  it('decodes v2 from the body when there is no header, flagged', () => {
    const body = JSON.stringify(buildPaymentRequired());
    const value = ok(decodeChallenge({ status: 402, headers: {}, body }));
    expect(value).toMatchObject({ version: 2, source: 'body', lenient: true, notes: ['v2_body_only'] });
    expect(value.accepts[0]?.amount).toBe('10000');
  });

  it('decodes v2 from the body after a broken header, with all notes', () => {
    const body = JSON.stringify(buildPaymentRequired());
    const value = ok(decodeChallenge({ status: 402, headers: { 'payment-required': 'e30' }, body }));
    expect(value.notes).toEqual(['header_invalid', 'header_invalid_body_used', 'v2_body_only']);
  });

  it('is invalid for an unknown x402Version in the body', () => {
    const body = JSON.stringify({ x402Version: 3, accepts: [buildAccept()] });
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body }))[0]).toMatchObject({
      path: 'body.x402Version',
      received: '3',
    });
  });

  it('is invalid for a truncated x402 body', () => {
    const body = buildV1Body().slice(0, 60);
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body }))[0]?.path).toBe('body');
  });
});

describe('decodeChallenge: absent', () => {
  it('treats a 200 with a valid header as absent (only a 402 asks for payment)', () => {
    expect(decodeChallenge(build402({ status: 200 }))).toEqual({ ok: false, kind: 'absent' });
  });

  it.each([
    ['plain text', 'Payment Required'],
    ['HTML', '<!doctype html><title>Pay</title>'],
    ['an empty object', '{}'],
    ['an empty body', ''],
    ['JSON without x402Version', JSON.stringify({ accepts: [buildAccept()] })],
    ['a JSON array', JSON.stringify([buildAccept()])],
    ['broken non-x402 JSON', '{"error": '],
  ])('treats a 402 with %s and no header as absent', (_name, body) => {
    expect(decodeChallenge({ status: 402, headers: { 'content-type': 'text/plain' }, body })).toEqual({
      ok: false,
      kind: 'absent',
    });
  });

  it('treats a 402 with a null body and no header as absent', () => {
    expect(decodeChallenge({ status: 402, headers: {}, body: null })).toEqual({ ok: false, kind: 'absent' });
  });

  it('treats 401, 403 and 500 answers as absent even with an x402 body', () => {
    for (const status of [401, 403, 500]) {
      expect(decodeChallenge({ status, headers: {}, body: buildV1Body() })).toEqual({
        ok: false,
        kind: 'absent',
      });
    }
  });
});

describe('decodeChallenge: expiry', () => {
  const at = 1_795_288_177;
  it.each([
    ['validBefore number', { validBefore: at }, at],
    ['validBefore digit string', { validBefore: String(at) }, at],
    ['extra.validBefore', { extra: { name: 'USD Coin', version: '2', validBefore: at } }, at],
    ['expiresAt ISO', { expiresAt: '2026-11-22T12:29:37Z' }, Date.UTC(2026, 10, 22, 12, 29, 37) / 1000],
    ['expiresAt ISO with offset and millis', { expiresAt: '2026-11-22T14:29:37.999+02:00' }, 1_795_350_577],
    ['expiresAt unix seconds', { expiresAt: at }, at],
    ['extra.expiresAt', { extra: { expiresAt: String(at) } }, at],
    ['validBefore before expiresAt', { validBefore: 100, expiresAt: at }, 100],
    ['own validBefore before extra', { validBefore: 100, extra: { validBefore: at } }, 100],
    ['extra.validBefore before own expiresAt', { expiresAt: 5, extra: { validBefore: 7 } }, 7],
    ['null validBefore falls through', { validBefore: null, expiresAt: at }, at],
    ['nothing stated', {}, null],
  ])('reads %s', (_name, override, expected) => {
    expect(ok(decodeChallenge(withAccepts(buildAccept(override)))).accepts[0]?.validBefore).toBe(expected);
  });

  it.each([
    ['validBefore as a date text', { validBefore: 'tomorrow' }, 'header.accepts[0].validBefore'],
    ['validBefore in milliseconds', { validBefore: 1_795_288_177_000 }, 'header.accepts[0].validBefore'],
    ['negative validBefore', { validBefore: -1 }, 'header.accepts[0].validBefore'],
    ['fractional validBefore', { validBefore: 1.5 }, 'header.accepts[0].validBefore'],
    ['expiresAt without a zone', { expiresAt: '2026-11-22T12:29:37' }, 'header.accepts[0].expiresAt'],
    [
      'expiresAt on a day that does not exist',
      { expiresAt: '2026-02-30T00:00:00Z' },
      'header.accepts[0].expiresAt',
    ],
    ['expiresAt in prose', { expiresAt: 'March 7, 2026' }, 'header.accepts[0].expiresAt'],
    ['garbage extra.validBefore', { extra: { validBefore: '0x10' } }, 'header.accepts[0].extra.validBefore'],
  ])('refuses %s (fail closed)', (_name, override, path) => {
    expect(issuesOf(decodeChallenge(withAccepts(buildAccept(override)))).map((i) => i.path)).toContain(path);
  });
});

describe('decodeChallenge: hostile sizes', () => {
  it('refuses a 2 MiB body without parsing it', () => {
    const body = `{"x402Version":1,"accepts":[${'"x",'.repeat(512 * 1024)}"x"]}`;
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body }))[0]).toMatchObject({
      path: 'body',
      expected: 'at most 1 MiB',
    });
  });

  it('refuses a header over 1 MiB and still reads a valid body', () => {
    const header = 'A'.repeat(MAX_CHALLENGE_CHARS + 4);
    const value = ok(
      decodeChallenge({ status: 402, headers: { 'payment-required': header }, body: buildV1Body() }),
    );
    expect(value.notes).toContain('header_invalid');
  });

  it('handles deeply nested JSON in the body without blowing the stack', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const body = `{"x402Version":1,"error":${deep},"accepts":[${JSON.stringify(buildV1Accept())}]}`;
    // The unused `error` member may nest arbitrarily: it is never walked.
    expect(ok(decodeChallenge({ status: 402, headers: {}, body })).accepts[0]?.amount).toBe('10000');
  });

  it('refuses an extra nested deeper than 16 levels, iteratively', () => {
    const deep = `${'{"a":'.repeat(50_000)}{}${'}'.repeat(50_000)}`;
    const accept = JSON.stringify(buildV1Accept({ extra: 'DEEP' })).replace('"DEEP"', deep);
    const body = `{"x402Version":1,"accepts":[${accept}]}`;
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body }))[0]?.path).toBe(
      'body.accepts[0].extra',
    );
    let shallow: unknown = { name: 'USD Coin' };
    for (let i = 0; i < 14; i++) shallow = { a: shallow };
    const fine = buildV1Body({ accepts: [buildV1Accept({ extra: shallow })] });
    expect(ok(decodeChallenge({ status: 402, headers: {}, body: fine })).accepts).toHaveLength(1);
  });

  it('handles a large array of junk accepts in bounded time', () => {
    const body = `{"x402Version":2,"accepts":[${'0,'.repeat(400_000)}0]}`;
    const started = performance.now();
    expect(issuesOf(decodeChallenge({ status: 402, headers: {}, body }))[0]?.path).toBe('body.accepts');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('never throws on odd inputs', () => {
    const odd = [
      { status: 402, headers: { 'payment-required': 42 as unknown as string }, body: null },
      { status: 402, headers: {}, body: 42 as unknown as string },
      { status: 402, headers: null as unknown as Record<string, string>, body: buildV1Body() },
      { status: 402, headers: {}, body: '{"x402Version":1,"accepts":[null,1,"x",[]]}' },
      { status: 402, headers: {}, body: '{"x402Version":1,"accepts":[{"__proto__":{"amount":"1"}}]}' },
    ];
    for (const res of odd) expect(() => decodeChallenge(res)).not.toThrow();
    expect(decodeChallenge(odd[2]!).ok).toBe(true);
    expect(issuesOf(decodeChallenge(odd[3]!)).length).toBeGreaterThan(0);
  });
});
