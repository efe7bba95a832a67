/**
 * A check without `payment_required` is byte for byte what it was before the check on a sent challenge existed:
 * `test/fixtures/check-assembly-0.42.1.json` holds the answers (full and free, as JSON text), the receipts' canonical
 * bytes and the observation that API 0.42.1 (commit 216894c) assembled from exactly these inputs, and the code of
 * today must assemble the same bytes.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleCheck, type CheckInput } from '../../../core/check-answer.ts';
import { canonicalJson } from '../../../core/jcs.ts';
import type { CheckRequest, Listing, Observation, ProbeOutcome } from '../../../core/model.ts';
import { buildV1Body, buildV2Header, PAY_TO, RESOURCE_URL } from '../../fixtures/challenge.ts';

const EVIL = '0x6666666666666666666666666666666666666666';
const PROBED = '2026-03-01T12:00:00.000Z';
const NOW = new Date('2026-03-01T12:00:20.000Z');

function outcome(headers: Record<string, string>, body: string | null = '{}', status = 402): ProbeOutcome {
  return {
    kind: 'response',
    probedAt: PROBED,
    elapsedMs: 3,
    response: {
      status,
      headers: { 'content-type': 'application/json', ...headers },
      body,
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: RESOURCE_URL,
      redirects: 0,
    },
  };
}

const request = (overrides: Partial<CheckRequest> = {}): CheckRequest => ({
  url: RESOURCE_URL,
  method: 'GET',
  claimedPrice: null,
  payTo: null,
  network: null,
  checkExpiry: false,
  skewS: 30,
  ...overrides,
});
const previous: Observation[] = [
  {
    observed_at: '2026-02-20T00:00:00.000Z',
    http_status: 402,
    price_usd: 0.01,
    amount_atomic: '10000',
    network: 'eip155:8453',
    asset: PAY_TO,
    pay_to: EVIL,
  },
];
const listing: Listing = {
  url: RESOURCE_URL,
  method: 'GET',
  priceUsd: 0.02,
  network: 'eip155:8453',
  asset: null,
  payTo: PAY_TO,
  source: 'cdp',
};
const header = { 'payment-required': buildV2Header() };

const CASES: Record<string, Partial<CheckInput>> = {
  pay: { outcome: outcome(header) },
  pay_to_mismatch: { outcome: outcome(header), request: request({ payTo: EVIL }) },
  price_mismatch: { outcome: outcome(header), request: request({ claimedPrice: '0.001' }) },
  dry_run: { outcome: outcome(header), mode: 'dry-run' },
  expiry: { outcome: outcome(header), request: request({ checkExpiry: true, skewS: 10 }) },
  v1: { outcome: outcome({}, buildV1Body()) },
  listing_history_cached: { outcome: outcome(header), listing, previous, cached: true },
  self_checked: {
    outcome: outcome(header),
    checkType: 'self-checked',
    request: request({ network: 'base' }),
  },
};

const golden = JSON.parse(
  readFileSync(new URL('../../fixtures/check-assembly-0.42.1.json', import.meta.url), 'utf8'),
) as Record<string, Record<string, unknown>>;

describe('a check without payment_required', () => {
  it('covers every case of the fixture', () => {
    expect(Object.keys(CASES)).toEqual(Object.keys(golden));
  });

  it.each(Object.entries(CASES))(
    '%s: the same answers, receipt bytes and observation as API 0.42.1',
    (name, c) => {
      const a = assembleCheck({
        outcome: outcome(header),
        cached: false,
        cacheTtlS: 300,
        request: request(),
        mode: 'live',
        checkType: 'dry-run',
        listing: null,
        previous: [],
        now: NOW,
        id: 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa',
        baseUrl: 'https://spotcheck.example',
        context: { task: null, client: 'c', ref: null },
        ...c,
      });
      expect({
        full: JSON.stringify(a.full),
        free: JSON.stringify(a.free),
        unsigned: canonicalJson(a.unsigned),
        freeUnsigned: canonicalJson(a.freeUnsigned),
        observation: a.observation,
      }).toEqual(golden[name]);
    },
  );
});
