import { describe, expect, it } from 'vitest';
import type { Accept, Challenge, ChallengeResult, ProbeOutcome } from '../../../core/model.ts';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { assessQuality } from '../../../core/quality.ts';
import type { QualityCode } from '../../../core/reasons.ts';

const WALLET = '0x1111111111111111111111111111111111111111';
const PROBED_AT = '2026-03-01T12:00:00.000Z';

const wireAccept = {
  scheme: 'exact',
  network: BASE,
  amount: '10000',
  asset: BASE_USDC,
  payTo: WALLET,
  maxTimeoutSeconds: 300,
  extra: { name: 'USD Coin', version: '2' },
};
const v2 = {
  x402Version: 2,
  error: 'Payment required',
  resource: { url: 'https://seller.example/x' },
  accepts: [wireAccept],
};
const v1 = {
  x402Version: 1,
  error: 'X-PAYMENT header is required',
  accepts: [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '10000',
      resource: 'https://seller.example/x',
      description: 'A thing',
      mimeType: 'application/json',
      payTo: WALLET,
      maxTimeoutSeconds: 60,
      asset: BASE_USDC,
      extra: { name: 'USD Coin', version: '2' },
    },
  ],
};
const b64 = (value: unknown) => btoa(JSON.stringify(value));
const STRICT_HEADER = b64(v2);

const accept: Accept = {
  scheme: 'exact',
  network: BASE,
  amount: '10000',
  asset: BASE_USDC,
  payTo: WALLET,
  maxTimeoutSeconds: 300,
  validBefore: null,
  extra: { name: 'USD Coin', version: '2' },
};

function decoded(overrides: Partial<Challenge> = {}): ChallengeResult {
  return {
    ok: true,
    value: {
      version: 2,
      source: 'header',
      lenient: false,
      accepts: [accept],
      resource: null,
      notes: [],
      ...overrides,
    },
  };
}

function outcome(status: number, headers: Record<string, string>, body: string | null = null): ProbeOutcome {
  return {
    kind: 'response',
    response: {
      status,
      headers,
      body,
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: 'https://seller.example/x',
      redirects: 0,
    },
    probedAt: PROBED_AT,
    elapsedMs: 10,
  };
}

const v2Headers = {
  'payment-required': STRICT_HEADER,
  'content-type': 'application/json',
  'cache-control': 'no-store',
};
const v1Headers = { 'content-type': 'application/json; charset=utf-8' };

describe('assessQuality', () => {
  it('grades a clean v2 answer as quality_ok and records the checks', () => {
    expect(assessQuality(outcome(402, v2Headers, '{}'), decoded())).toEqual({
      code: 'quality_ok',
      checks: {
        status_402: true,
        header_present: true,
        header_strict_schema: true,
        body_json: true,
        content_type_json: true,
        cache_control_no_store: true,
        accepts_count: 1,
        x402_version: 2,
        header_bytes: STRICT_HEADER.length,
      },
    });
  });

  it.each<[string, ProbeOutcome, ChallengeResult | null, QualityCode]>([
    [
      'no response',
      { kind: 'timeout', detail: 't', probedAt: PROBED_AT, elapsedMs: 5000 },
      null,
      'quality_unreachable',
    ],
    [
      'blocked',
      { kind: 'blocked', detail: 'b', probedAt: PROBED_AT, elapsedMs: 0 },
      null,
      'quality_unreachable',
    ],
    ['a 200', outcome(200, v2Headers, '{}'), { ok: false, kind: 'absent' }, 'quality_bad_status'],
    ['a 500 with a header', outcome(500, v2Headers), decoded(), 'quality_bad_status'],
    // The v2 body is a server concern (an HTML paywall is fine) but a content type is still expected.
    [
      'v2 header with an HTML body',
      outcome(402, { ...v2Headers, 'content-type': 'text/html' }, '<p>pay</p>'),
      decoded(),
      'quality_ok',
    ],
    [
      'v2 header without content-type',
      outcome(402, { 'payment-required': STRICT_HEADER }),
      decoded(),
      'quality_bad_content_type',
    ],
    [
      'v1 body as text/plain',
      outcome(402, { 'content-type': 'text/plain' }, JSON.stringify(v1)),
      decoded({ version: 1, source: 'body' }),
      'quality_bad_content_type',
    ],
    [
      'no terms, body as text/html',
      outcome(402, { 'content-type': 'text/html' }, '<p>hi</p>'),
      { ok: false, kind: 'absent' },
      'quality_bad_content_type',
    ],
    // Content type is judged before the schema.
    [
      'lenient v2 body as text/plain',
      outcome(402, { 'content-type': 'text/plain' }, JSON.stringify(v2)),
      decoded({ source: 'body', lenient: true }),
      'quality_bad_content_type',
    ],
    [
      'strict v1 body',
      outcome(402, v1Headers, JSON.stringify(v1)),
      decoded({ version: 1, source: 'body' }),
      'quality_unverified',
    ],
    [
      'problem+json v1 body',
      outcome(402, { 'content-type': 'application/problem+json' }, JSON.stringify(v1)),
      decoded({ version: 1, source: 'body' }),
      'quality_unverified',
    ],
    [
      'v1 body without the required description',
      outcome(
        402,
        v1Headers,
        JSON.stringify({ ...v1, accepts: [{ ...v1.accepts[0], description: undefined }] }),
      ),
      decoded({ version: 1, source: 'body' }),
      'quality_schema_mismatch',
    ],
    ['lenient decode', outcome(402, v2Headers, '{}'), decoded({ lenient: true }), 'quality_schema_mismatch'],
    [
      'v2 in the body only',
      outcome(402, v1Headers, JSON.stringify(v2)),
      decoded({ source: 'body', lenient: true }),
      'quality_schema_mismatch',
    ],
    [
      'base64url header',
      outcome(402, {
        ...v2Headers,
        'payment-required': `${STRICT_HEADER.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')}_`,
      }),
      decoded(),
      'quality_schema_mismatch',
    ],
    [
      'serviceName longer than the SDK allows',
      outcome(402, {
        ...v2Headers,
        'payment-required': b64({ ...v2, resource: { url: 'https://x', serviceName: 'x'.repeat(33) } }),
      }),
      decoded(),
      'quality_schema_mismatch',
    ],
    [
      'header that is not JSON',
      outcome(402, { ...v2Headers, 'payment-required': btoa('not json') }),
      decoded(),
      'quality_schema_mismatch',
    ],
    [
      '402 without terms',
      outcome(402, v1Headers, '{}'),
      { ok: false, kind: 'absent' },
      'quality_schema_mismatch',
    ],
    [
      '402 with invalid terms',
      outcome(402, v2Headers, '{}'),
      { ok: false, kind: 'invalid', issues: [] },
      'quality_schema_mismatch',
    ],
  ])('%s → %s', (_name, probe, challenge, code) => {
    expect(assessQuality(probe, challenge).code).toBe(code);
  });

  it('leaves every check null when there was no response', () => {
    const { checks } = assessQuality(
      { kind: 'unreachable', detail: 'dns', probedAt: PROBED_AT, elapsedMs: 3 },
      null,
    );
    expect(Object.values(checks).every((value) => value === null)).toBe(true);
    expect(Object.keys(checks)).toHaveLength(9);
  });

  it('records the weaker observations of a sloppy answer', () => {
    const { checks } = assessQuality(
      outcome(402, { 'content-type': 'text/html', 'cache-control': 'public, max-age=60' }, '<html>'),
      { ok: false, kind: 'absent' },
    );
    expect(checks).toMatchObject({
      status_402: true,
      header_present: false,
      header_strict_schema: null,
      body_json: false,
      content_type_json: false,
      cache_control_no_store: false,
      accepts_count: null,
      x402_version: null,
      header_bytes: null,
    });
  });

  it('does not count a truncated body as JSON', () => {
    const probe = outcome(402, v1Headers, JSON.stringify(v1));
    if (probe.kind === 'response') probe.response.bodyTruncated = true;
    expect(assessQuality(probe, decoded({ version: 1, source: 'body' })).checks.body_json).toBe(false);
  });
});
