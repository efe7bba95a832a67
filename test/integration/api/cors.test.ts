/**
 * CORS (docs/api.md §4): every answer allows any origin and exposes the payment, rate-limit and hosted headers;
 * preflights allow the payment, key and MCP headers. The lists are written out here as the contract states them,
 * never derived from the code's constants, so a list that loses or gains a header fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber() }, { listen: false });
});
afterAll(async () => {
  await spot.stop();
});

describe('CORS headers', () => {
  it('every answer allows any origin and exposes the payment, rate-limit, hosted and delisting headers', async () => {
    const res = await appFetch(spot.service, '/healthz');
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, RateLimit, RateLimit-Policy, Retry-After, x-service-hosted, x-delisted-at',
    );
  });

  it('an error answer allows any origin too, so a page on another origin can read why it was refused', async () => {
    const paths = [
      '/v1/products/endpoint-spot-check?url=nope',
      '/v1/no-such-route',
      '/v1/products/payment-status',
    ];
    for (const path of paths) {
      const res = await appFetch(spot.service, path, { headers: { accept: 'application/json' } });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(res.headers.get('access-control-expose-headers'), path).toContain('Retry-After');
    }
  });

  it('a preflight allows the payment, key and MCP headers', async () => {
    const res = await appFetch(spot.service, '/v1/products/endpoint-spot-check', { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'content-type, authorization, payment-signature, x-payment, x-service-key, x-service-end-user, mcp-protocol-version',
    );
    expect(res.headers.get('access-control-max-age')).toBe('600');
  });
});
