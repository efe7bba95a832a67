/**
 * Hosted accounts with the server running: the operator CLI hands its operations over through the inbox (the
 * server holds the store), and `GET /v1/integrators/me` answers with the integrator's own key only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServiceKey } from '../../../core/service-key.ts';
import { issuedKey, runCli } from '../../helpers/cli.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

let spot: TestService;

const integrators = (args: string[]) => runCli('integrators-cli.ts', args, spot.dataDir);

const me = (headers: Record<string, string> = {}) =>
  appFetch(spot.service, '/v1/integrators/me', { headers });

beforeAll(async () => {
  spot = await startTestService({}, {}, { listen: false });
});
afterAll(async () => {
  await spot?.stop();
});

describe('integrators with the server running', { timeout: 240_000 }, () => {
  it('creates an integrator and a key through the inbox; the key reads its account; a suspended key is a 401', async () => {
    const created = await integrators([
      'create',
      '--name',
      'Acme Router',
      '--credit-limit',
      '30',
      '--id',
      'acme',
    ]);
    expect(created.stderr).toBe('');
    expect(JSON.parse(created.stdout)).toEqual({ created: 'acme', credit_limit_atomic: '30000000' });
    const issued = await integrators(['keys:issue', 'acme', '--label', 'prod']);
    const key = issuedKey(issued);
    const keyId = parseServiceKey(key)?.id;
    expect(keyId).toBeDefined();

    for (const headers of [{ authorization: `Bearer ${key}` }, { 'x-service-key': key }]) {
      const response = await me(headers);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = await response.json();
      expect(body).toMatchObject({
        integrator: { id: 'acme', name: 'Acme Router' },
        current_month: {
          calls: 0,
          bands: { free_allowance: 0, standard: 0, volume: 0 },
          amount_due: { atomic: '0', usd: '0' },
          credit_limit: { atomic: '30000000', usd: '30' },
          credit_left: { atomic: '30000000', usd: '30' },
          end_users: 0,
        },
        keys: [{ id: keyId, label: 'prod', state: 'active' }],
        previous_months: [],
      });
    }

    const missing = await me();
    expect(missing.status).toBe(401);
    expect((await missing.json()).error.code).toBe('missing_key');
    const wrongSecret = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [wrongSecret, 'sck_live_nope', 'Bearer']) {
      const response = await me({ authorization: `Bearer ${bad}` });
      expect(response.status).toBe(401);
    }

    expect((await integrators(['suspend', keyId ?? ''])).code).toBe(0);
    const suspended = await me({ authorization: `Bearer ${key}` });
    expect(suspended.status).toBe(401);
    expect(await suspended.json()).toEqual({
      error: { code: 'bad_key', message: 'The service key is suspended.' },
    });
  });
});
