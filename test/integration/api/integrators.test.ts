/**
 * Hosted accounts with the server running: the operator CLI hands its operations over through the inbox (the
 * server holds the store), and `GET /v1/integrators/me` answers with the integrator's own key only.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bandOf } from '../../../core/hosted.ts';
import { parseServiceKey } from '../../../core/service-key.ts';
import { verifyReceipt } from '../../../verify/verify.ts';
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

  it('issues invoices through the inbox; the integrator reads its invoice and PDF, nobody else does', async () => {
    const hosted = spot.service.deps.hosted;
    if (!hosted) throw new Error('hosted mode is not wired');
    for (const [id, label] of [
      ['inva', 'a'],
      ['invb', 'b'],
    ] as const) {
      await integrators(['create', '--name', `Invoiced ${label}`, '--credit-limit', '0', '--id', id]);
    }
    const keyA = issuedKey(await integrators(['keys:issue', 'inva']));
    const keyB = issuedKey(await integrators(['keys:issue', 'invb']));
    // 1,500 hosted uses last month: 1,000 attached to ledger records (as a route journals them with its receipt),
    // 500 journaled alone (as a call that issued no receipt).
    const month = '2026-01';
    for (let n = 1; n <= 1500; n++) {
      hosted.meter.restore(month, 'inva', 1, []);
      const use = { integrator: 'inva', month, n, ...bandOf(n), endUser: null, release: () => {} };
      if (n <= 1000) await spot.service.deps.ledger.attach(hosted.attachment(use, 'k'));
      else await hosted.record(use, 'k');
    }
    const run = await runCli('invoices-cli.ts', ['--month', month], spot.dataDir);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([
      { id: 'inv-202601-inva', integrator: 'inva', total_atomic: '10000000', created: true },
    ]);

    const own = await appFetch(spot.service, '/v1/invoices/inv-202601-inva', {
      headers: { authorization: `Bearer ${keyA}` },
    });
    expect(own.status).toBe(200);
    const body = await own.json();
    expect(body.payment).toEqual({
      status: 'open',
      tx: null,
      paid_at: null,
      pay_url: expect.stringMatching(/\/v1\/invoices\/inv-202601-inva\/pay\?token=[0-9a-f]{32}$/),
      overpayments: [],
    });
    // The pay link is the one inside the signed invoice.
    expect(body.payment.pay_url).toBe(body.invoice.pay_url);
    expect(body.invoice.total).toEqual({ atomic: '10000000', usd: '10' });
    const jwks = await (await appFetch(spot.service, '/.well-known/jwks.json')).json();
    expect(await verifyReceipt(body.invoice, jwks)).toMatchObject({ ok: true });

    const pdf = await appFetch(spot.service, '/v1/invoices/inv-202601-inva.pdf', {
      headers: { 'x-service-key': keyA },
    });
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const onDisk = await readFile(join(spot.dataDir, 'invoices', month, 'inv-202601-inva.pdf'));
    expect(Buffer.from(await pdf.arrayBuffer()).equals(onDisk)).toBe(true);

    for (const [path, headers] of [
      ['/v1/invoices/inv-202601-inva', { authorization: `Bearer ${keyB}` }],
      ['/v1/invoices/inv-202601-nobody', { authorization: `Bearer ${keyA}` }],
      ['/v1/invoices/..%2Fkeys', { authorization: `Bearer ${keyA}` }],
    ] as const) {
      const response = await appFetch(spot.service, path, { headers });
      expect(response.status).toBe(404);
      expect((await response.json()).error.code).toBe('invoice_not_found');
    }
    expect((await appFetch(spot.service, '/v1/invoices/inv-202601-inva')).status).toBe(401);

    const me = await (
      await appFetch(spot.service, '/v1/integrators/me', { headers: { authorization: `Bearer ${keyA}` } })
    ).json();
    expect(me.previous_months).toEqual([
      {
        month,
        calls: 1500,
        bands: { free_allowance: 1000, standard: 500, volume: 0 },
        amount_due: { atomic: '10000000', usd: '10' },
        end_users: 0,
        invoice: expect.objectContaining({ id: 'inv-202601-inva', status: 'open', tx: null }),
      },
    ]);
  });
});
