import { describe, expect, it } from 'vitest';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { decodePayload, isBareRequest, parsePaymentStatusInput } from '../../../core/payment-input.ts';
import { FROM, NONCE, TO, TX } from '../../fixtures/payment.ts';

function authorization(overrides: Record<string, unknown> = {}) {
  return {
    from: FROM,
    to: TO,
    value: '10000',
    validAfter: '0',
    validBefore: '1795288177',
    nonce: NONCE,
    ...overrides,
  };
}

function v2(overrides: Record<string, unknown> = {}, accepted: Record<string, unknown> = {}) {
  return {
    x402Version: 2,
    payload: { authorization: authorization(), signature: `0x${'1b'.repeat(65)}` },
    resource: { url: 'https://seller.example/x' },
    accepted: {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '10000',
      asset: BASE_USDC,
      payTo: TO,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
      ...accepted,
    },
    ...overrides,
  };
}

function v1(overrides: Record<string, unknown> = {}) {
  return {
    x402Version: 1,
    scheme: 'exact',
    network: 'base',
    payload: { authorization: authorization(), signature: `0x${'1b'.repeat(65)}` },
    ...overrides,
  };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
const code = (raw: unknown) => {
  const result = parsePaymentStatusInput(raw);
  return result.ok ? 'ok' : result.code;
};

describe('parsePaymentStatusInput: payment_payload', () => {
  it('decodes a v2 PAYMENT-SIGNATURE value', () => {
    const result = parsePaymentStatusInput({ payment_payload: b64(v2()) });
    expect(result).toEqual({
      ok: true,
      value: {
        from: FROM,
        nonce: NONCE,
        validAfter: 0n,
        validBefore: 1795288177n,
        value: 10000n,
        to: TO,
        txHash: null,
        sellerUrl: null,
        terms: null,
        accepted: { amount: '10000', payTo: TO, asset: BASE_USDC, network: BASE },
        source: 'payment_payload',
        payloadVersion: 2,
        client: null,
        ref: null,
      },
    });
  });

  it('decodes a v1 X-PAYMENT value and maps the network name base to eip155:8453', () => {
    const result = parsePaymentStatusInput({ payment_payload: b64(v1()) });
    expect(result.ok && result.value.payloadVersion).toBe(1);
    expect(result.ok && result.value.accepted).toEqual({
      amount: null,
      payTo: null,
      asset: null,
      network: BASE,
    });
  });

  it('accepts base64url, whitespace, missing padding and bare JSON', () => {
    const standard = b64(v2());
    const url = standard.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    const wrapped = `  ${standard.slice(0, 40)}\n${standard.slice(40)}  `;
    for (const text of [url, wrapped, JSON.stringify(v2())]) {
      expect(code({ payment_payload: text }), text.slice(0, 20)).toBe('ok');
    }
  });

  it.each([
    ['not base64', '***'],
    ['base64 of text', Buffer.from('hello').toString('base64')],
    ['base64 of an array', b64([1, 2])],
    ['no signature', b64({ ...v2(), payload: { authorization: authorization() } })],
    [
      'short nonce',
      b64({ ...v2(), payload: { authorization: authorization({ nonce: '0x01' }), signature: '0x00' } }),
    ],
    [
      'numeric value',
      b64({ ...v2(), payload: { authorization: authorization({ value: 10000 }), signature: '0x00' } }),
    ],
    ['permit2 payload', b64({ ...v2(), payload: { permit2Authorization: {}, signature: '0x00' } })],
    ['another scheme', b64(v2({}, { scheme: 'upto' }))],
    ['unknown version', b64({ ...v2(), x402Version: 3 })],
    ['v1 without network', b64({ ...v1(), network: undefined })],
  ])('answers bad_payload for %s', (_name, payload) => {
    expect(code({ payment_payload: payload })).toBe('bad_payload');
  });

  it.each([
    ['v2 Base Sepolia', b64(v2({}, { network: 'eip155:84532' }))],
    ['v1 base-sepolia', b64(v1({ network: 'base-sepolia' }))],
    ['v2 Solana', b64(v2({}, { network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }))],
    ['v1 unknown name', b64(v1({ network: 'basechain' }))],
  ])('answers unsupported_network for %s', (_name, payload) => {
    expect(code({ payment_payload: payload })).toBe('unsupported_network');
  });

  it('answers unsupported_asset for another token and accepts USDC in any case', () => {
    expect(code({ payment_payload: b64(v2({}, { asset: TO })) })).toBe('unsupported_asset');
    expect(code({ payment_payload: b64(v2({}, { asset: BASE_USDC.toLowerCase() })) })).toBe('ok');
  });
});

describe('parsePaymentStatusInput: references', () => {
  it('takes tx_hash alone', () => {
    const result = parsePaymentStatusInput({ tx_hash: TX });
    expect(result.ok && result.value).toMatchObject({
      source: 'tx_hash',
      txHash: TX,
      from: null,
      nonce: null,
    });
  });

  it('takes from with nonce and valid_before as a string or a number', () => {
    const result = parsePaymentStatusInput({ from: FROM, nonce: NONCE, valid_before: '1795288177' });
    expect(result.ok && result.value).toMatchObject({
      source: 'from_nonce',
      from: FROM,
      validBefore: 1795288177n,
    });
    const numeric = parsePaymentStatusInput({ from: FROM, nonce: NONCE, valid_before: 1795288177 });
    expect(numeric.ok && numeric.value.validBefore).toBe(1795288177n);
  });

  it.each([
    ['an empty object', {}, 'missing_reference'],
    ['from alone', { from: FROM }, 'missing_reference'],
    ['only a seller_url', { seller_url: 'https://seller.example/x' }, 'missing_reference'],
    ['nonce without from', { nonce: NONCE }, 'inconsistent'],
    ['a short from', { from: '0x1234', nonce: NONCE }, 'bad_from'],
    ['a nonce of 31 bytes', { from: FROM, nonce: `0x${'00'.repeat(31)}` }, 'bad_nonce'],
    ['a tx_hash without 0x', { tx_hash: 'ab'.repeat(32) }, 'bad_tx_hash'],
    ['a non-hex tx_hash', { tx_hash: `0x${'zz'.repeat(32)}` }, 'bad_tx_hash'],
    ['a from that differs from the payload', { payment_payload: b64(v2()), from: TO }, 'inconsistent'],
    [
      'a nonce that differs from the payload',
      { payment_payload: b64(v2()), nonce: `0x${'24'.repeat(32)}` },
      'inconsistent',
    ],
    ['a valid_before that differs', { payment_payload: b64(v2()), valid_before: '1' }, 'inconsistent'],
  ])('answers %s with %s', (_name, raw, expected) => {
    expect(code(raw)).toBe(expected);
  });

  it('accepts explicit from and nonce that match the payload up to case', () => {
    expect(
      code({
        payment_payload: b64(v2()),
        from: FROM.toLowerCase(),
        nonce: NONCE.toUpperCase().replace('0X', '0x'),
      }),
    ).toBe('ok');
    expect(code({ payment_payload: b64(v2()), nonce: NONCE })).toBe('ok');
  });
});

describe('parsePaymentStatusInput: other members', () => {
  it.each([
    ['eip155:8453', 'ok'],
    ['base', 'ok'],
    ['eip155:1', 'unsupported_network'],
    ['base-sepolia', 'unsupported_network'],
  ])('network %s gives %s', (network, expected) => {
    expect(code({ tx_hash: TX, network })).toBe(expected);
  });

  it('refuses an asset other than Base USDC, in any case', () => {
    expect(code({ tx_hash: TX, asset: TO })).toBe('unsupported_asset');
    expect(code({ tx_hash: TX, asset: BASE_USDC.toUpperCase().replace('0X', '0x') })).toBe('ok');
  });

  it.each([['ftp://seller.example/x'], ['seller.example/x'], ['https://']])(
    'answers bad_seller_url for %s',
    (url) => {
      expect(code({ tx_hash: TX, seller_url: url })).toBe('bad_seller_url');
    },
  );

  it('keeps seller_url, terms (network normalized), client and ref', () => {
    const result = parsePaymentStatusInput({
      tx_hash: TX,
      seller_url: 'https://seller.example/x',
      terms: { amount: '10000', payTo: TO, asset: BASE_USDC, network: 'base' },
      client: 'agent',
      ref: 'r1',
    });
    expect(result.ok && result.value).toMatchObject({
      sellerUrl: 'https://seller.example/x',
      terms: { amount: '10000', payTo: TO, asset: BASE_USDC, network: BASE },
      client: 'agent',
      ref: 'r1',
    });
  });

  it.each([
    ['an array body', [1]],
    ['a string body', 'tx'],
    ['a null body', null],
    ['a numeric tx_hash', { tx_hash: 12 }],
    ['a non-numeric valid_before', { from: FROM, nonce: NONCE, valid_before: 'soon' }],
    ['a negative valid_before', { from: FROM, nonce: NONCE, valid_before: -1 }],
    ['a repeated query parameter', { tx_hash: [TX, TX] }],
    ['an overlong payload', { payment_payload: 'A'.repeat(20_000) }],
  ])('answers bad_body for %s', (_name, raw) => {
    expect(code(raw)).toBe('bad_body');
  });

  it.each([
    ['terms as a string', { tx_hash: TX, terms: 'x' }, 'bad_terms'],
    ['a decimal terms amount', { tx_hash: TX, terms: { amount: '0.01' } }, 'bad_terms'],
    ['an overlong client', { tx_hash: TX, client: 'x'.repeat(300) }, 'bad_client'],
    ['a ref with a newline', { tx_hash: TX, ref: 'a\nb' }, 'bad_ref'],
  ])('answers the member code for %s', (_name, raw, expected) => {
    expect(code(raw)).toBe(expected);
  });

  it('ignores unknown members and treats null or empty members as absent', () => {
    expect(code({ tx_hash: TX, colour: 'blue', from: '', nonce: null })).toBe('ok');
  });
});

describe('isBareRequest', () => {
  it.each([
    [undefined, true],
    [null, true],
    [{}, true],
    [{ tx_hash: '' }, true],
    [{ unknown: 'x' }, true],
    [{ client: 'agent' }, false],
    [{ tx_hash: TX }, false],
    [[], false],
  ])('%j gives %s', (raw, expected) => {
    expect(isBareRequest(raw)).toBe(expected);
  });
});

describe('decodePayload', () => {
  it('returns the authorization as bigints', () => {
    const result = decodePayload(b64(v2()));
    expect(result.ok && result.value.authorization).toEqual({
      from: FROM,
      to: TO,
      nonce: NONCE,
      value: 10000n,
      validAfter: 0n,
      validBefore: 1795288177n,
    });
  });
});
