/** The opt-out list's matching, Retry-After's reading and the per-host daily budget's figure. */
import { describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../../core/model.ts';
import { isOptedOut, parseOptOut } from '../../../core/opt-out.ts';
import { HOST_DAILY_BASE, HOST_DAILY_PER_LISTING, hostDailyLimit } from '../../../core/politeness.ts';
import { probeStateOf } from '../../../core/probe-state.ts';
import { retryAfterMs } from '../../../core/retry-after.ts';

const answer = (status: number, headers: Record<string, string> = {}): ProbeOutcome => ({
  kind: 'response',
  response: {
    status,
    headers,
    body: null,
    bodyTruncated: false,
    methodUsed: 'GET',
    finalUrl: 'https://x/',
    redirects: 0,
  },
  probedAt: '2026-03-01T00:00:00.000Z',
  elapsedMs: 1,
});

describe('politeness', () => {
  it('opts out a host, the names under it, and a host:port entry only on that port', () => {
    const parsed = parseOptOut({ schema: 1, hosts: ['Seller.Example', '127.0.0.1:4021'] });
    if (!parsed.ok) throw new Error(parsed.message);
    expect(isOptedOut('seller.example', parsed.list)).toBe(true);
    expect(isOptedOut('api.seller.example:8443', parsed.list)).toBe(true);
    expect(isOptedOut('notseller.example', parsed.list)).toBe(false);
    expect(isOptedOut('127.0.0.1:4021', parsed.list)).toBe(true);
    expect(isOptedOut('127.0.0.1:4022', parsed.list)).toBe(false);
    expect(parseOptOut({ schema: 1, hosts: ['https://seller.example/'] })).toMatchObject({ ok: false });
  });

  it('reads Retry-After of a 429 or 503 as seconds or a date, and nothing else', () => {
    const now = new Date('2026-03-01T00:00:00.000Z');
    expect(retryAfterMs(answer(429, { 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(answer(503, { 'retry-after': 'Sun, 01 Mar 2026 00:00:30 GMT' }), now)).toBe(30_000);
    expect(retryAfterMs(answer(503, { 'retry-after': 'Sat, 28 Feb 2026 00:00:30 GMT' }), now)).toBe(0);
    expect(retryAfterMs(answer(429), now)).toBeNull();
    expect(retryAfterMs(answer(429, { 'retry-after': 'soon' }), now)).toBeNull();
    expect(retryAfterMs(answer(500, { 'retry-after': '2' }), now)).toBeNull();
  });

  it('gives each host a day of its base plus its listings', () => {
    expect(hostDailyLimit(0)).toBe(HOST_DAILY_BASE);
    expect(hostDailyLimit(36_000)).toBe(HOST_DAILY_BASE + HOST_DAILY_PER_LISTING * 36_000);
  });

  it('names why a probe ended before a 402, and nothing for a 402', () => {
    const states = [400, 422, 401, 403, 404, 410, 405, 429, 418, 500, 503, 200, 304].map((s) =>
      probeStateOf(answer(s)),
    );
    expect(states).toEqual([
      'needs_input',
      'needs_input',
      'access_denied',
      'access_denied',
      'not_found',
      'not_found',
      'method_not_allowed',
      'rate_limited',
      'client_error',
      'server_error',
      'server_error',
      'answered_without_paywall',
      'redirect_unfollowed',
    ]);
    expect(probeStateOf(answer(402))).toBeNull();
    expect(probeStateOf({ kind: 'timeout', detail: 'timeout_headers', probedAt: '', elapsedMs: 5000 })).toBe(
      'timeout',
    );
  });
});
