/**
 * Every offer's 402 carries a bazaar discovery block that the SDK's own validators accept:
 * discovery tools run `validateDiscoveryExtension` and drop a route whose example does not match its schema.
 * Each paid route is fetched unpaid through the real service; the check route after the day's free checks.
 */
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { SupportedKind } from '@x402/core/types';
import {
  type DiscoveryExtension,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../../core/limits.ts';
import { BASE } from '../../../core/networks.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const facilitator: FacilitatorClient = {
  verify: async () => ({ isValid: false, invalidReason: 'unused' }),
  settle: async () => ({ success: false, transaction: '', network: BASE, errorReason: 'unused' }),
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: 'exact', network: BASE }] as SupportedKind[],
    extensions: [],
    signers: {},
  }),
};

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber(), facilitator }, { listen: false });
});
afterAll(() => spot.stop());

const CHECK = '/v1/products/endpoint-spot-check';
const checkQuery = `${CHECK}?url=${encodeURIComponent('https://seller.example/item')}`;
const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Each route sold through x402, as an unpaid request that reaches its 402 (`ip` keeps the free tiers apart). */
const routes: Array<[name: string, path: string, init: RequestInit, ip: string]> = [
  ['GET check', checkQuery, {}, '198.51.100.1'],
  ['POST check', CHECK, json({ url: 'https://seller.example/item' }), '198.51.101.1'],
  ['GET lookup', '/v1/lookup/paid?task=fx-rate', {}, '198.51.102.1'],
  ['GET payment-status', '/v1/products/payment-status', {}, '198.51.103.1'],
  ['POST payment-status', '/v1/products/payment-status', json({}), '198.51.104.1'],
  ['GET setup-pack', '/v1/products/overnight-cos-pack', {}, '198.51.105.1'],
  ['POST setup-pack', '/v1/products/overnight-cos-pack', json({}), '198.51.106.1'],
];

describe('discovery', () => {
  it.each(routes)('%s: the 402 discovery block passes the SDK validators', async (name, path, init, ip) => {
    if (name.endsWith('check')) {
      // The check is free until the day's free checks are used up.
      for (let i = 0; i < LIMITS.freeChecksPerDay; i++) {
        expect((await appFetch(spot.service, path, { ...init, ip })).status).toBe(200);
      }
    }
    const response = await appFetch(spot.service, path, { ...init, ip });
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get('payment-required') ?? '');
    const bazaar = required.extensions?.['bazaar'] as DiscoveryExtension | undefined;
    expect(bazaar).toBeDefined();
    expect(bazaar?.info.input).toMatchObject({ type: 'http', method: name.split(' ')[0] });
    expect(validateDiscoveryExtension(bazaar as DiscoveryExtension)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>)).toEqual({
      valid: true,
    });
  });
});
