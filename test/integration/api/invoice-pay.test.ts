/**
 * Paying an invoice (`GET`/`POST /v1/invoices/{id}/pay`) through `app.fetch`, with the real seller, sales adapter,
 * stores and signing key, and a fake facilitator at the injected seam whose verify and settle each payer's test holds
 * or lets go. Payments are signed by the official x402 client.
 *
 * - Only the integrator's key or the pay link's token opens the route; anyone else gets one and the same 404, and
 *   nothing a caller without the key sees names the integrator or a transaction.
 * - The invoice is claimed only once the facilitator verified a payment: a refused authorization replayed while it
 *   is being verified never locks the real payer out.
 * - A settlement refused before broadcast gives the claim back; one whose outcome is unknown keeps it until it
 *   expires.
 * - With `DATABASE_URL`, two instances on one PostgreSQL: of two payers at once, one settles and the other gets a 409
 *   and is never settled; a settlement landing on an invoice already paid is answered `overpaid` and recorded where
 *   the operator and the integrator read it.
 */
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, SettleResponse, SupportedKind } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import postgres from 'postgres';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BASE } from '../../../core/networks.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { runCli } from '../../helpers/cli.ts';
import { createIntegrator, previousMonth, recordHostedCalls } from '../../helpers/integrators.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const BUYERS = ['11', '22', '33', '44', '55', '66'].map((b) => privateKeyToAccount(`0x${b.repeat(32)}`));
const txOf = (payer: string) => `0x${payer.slice(2, 42).toLowerCase()}${'0'.repeat(24)}`;

/** Who a payload pays from. */
const payerOf = (payload: PaymentPayload) =>
  String((payload.payload as { authorization?: { from?: string } }).authorization?.from ?? '').toLowerCase();

type Gate = { promise: Promise<void>; open: () => void };
const gate = (): Gate => {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
};

/**
 * A facilitator whose answers the test sets per payer: verify `valid` or `invalid`, settle `landed`, `refused`
 * (nothing broadcast) or `unknown` (throws, as a timeout does); each may wait on a gate.
 */
function fakeFacilitator() {
  const verdicts = new Map<string, 'valid' | 'invalid'>();
  const outcomes = new Map<string, 'landed' | 'refused' | 'unknown'>();
  const verifyGates = new Map<string, Gate>();
  const settleGates = new Map<string, Gate>();
  const facilitator = {
    verify: vi.fn(async (payload: PaymentPayload) => {
      const payer = payerOf(payload);
      await verifyGates.get(payer)?.promise;
      return verdicts.get(payer) === 'invalid'
        ? { isValid: false, invalidReason: 'insufficient_funds', payer }
        : { isValid: true, payer };
    }),
    settle: vi.fn(async (payload: PaymentPayload) => {
      const payer = payerOf(payload);
      await settleGates.get(payer)?.promise;
      const outcome = outcomes.get(payer) ?? 'landed';
      if (outcome === 'unknown') throw new Error('facilitator timed out');
      return (
        outcome === 'refused'
          ? { success: false, errorReason: 'insufficient_funds', transaction: '', network: BASE, payer }
          : { success: true, transaction: txOf(payer), network: BASE, payer }
      ) as SettleResponse;
    }),
    getSupported: vi.fn(async () => ({
      kinds: [{ x402Version: 2, scheme: 'exact', network: BASE } as SupportedKind],
      extensions: [],
      signers: {},
    })),
  } satisfies FacilitatorClient;
  const settledBy = () =>
    facilitator.settle.mock.calls.map(([payload]) => payerOf(payload as PaymentPayload));
  return { facilitator, verdicts, outcomes, verifyGates, settleGates, settledBy };
}

/** An integrator with a USD 0.04 invoice for last month (1,002 hosted checks); its key and pay link path. */
async function invoiced(spot: TestService, id: string) {
  const hosted = spot.service.deps.hosted;
  if (!hosted) throw new Error('hosted mode is not wired');
  const [key = ''] = await createIntegrator(hosted, id, '0');
  const month = previousMonth();
  await recordHostedCalls(hosted, id, month, 1002);
  await hosted.apply(JSON.stringify({ op: 'invoices', month }));
  const invoiceId = `inv-${month.replace('-', '')}-${id}`;
  const read = await appFetch(spot.service, `/v1/invoices/${invoiceId}`, {
    headers: { 'x-service-key': key },
  });
  const body = (await read.json()) as { invoice: { pay_url: string }; payment: { pay_url: string } };
  expect(body.payment.pay_url).toBe(body.invoice.pay_url);
  const link = new URL(body.payment.pay_url);
  return { key, invoiceId, path: `${link.pathname}${link.search}`, bare: link.pathname };
}

/** A `PAYMENT-SIGNATURE` from buyer `index` for the 402 that `path` gives now. */
async function signFor(spot: TestService, path: string, index: number, headers: Record<string, string> = {}) {
  const unpaid = await appFetch(spot.service, path, { headers });
  expect(unpaid.status).toBe(402);
  const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? '');
  const buyer = BUYERS[index];
  if (!buyer) throw new RangeError(`no buyer ${index}`);
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(buyer));
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

const payer = (index: number) => BUYERS[index]?.address.toLowerCase() ?? '';

describe('paying an invoice on one instance', { timeout: 120_000 }, () => {
  let spot: TestService;
  let fake: ReturnType<typeof fakeFacilitator>;
  beforeAll(async () => {
    fake = fakeFacilitator();
    spot = await startTestService(
      {},
      { prober: fakeProber(), facilitator: fake.facilitator },
      { listen: false },
    );
  });
  afterAll(async () => {
    await spot?.stop();
  });

  it('gives one and the same 404 to an unknown id, a missing or wrong token and another integrator', async () => {
    const { invoiceId, path, bare } = await invoiced(spot, 'secret');
    const [otherKey = ''] = await createIntegrator(spot.service.deps.hosted!, 'other', '0');
    const wrong = `${bare}?token=${'0'.repeat(32)}`;
    const asks: Array<[string, RequestInit]> = [
      [`/v1/invoices/inv-202601-nobody/pay`, {}],
      [
        `/v1/invoices/inv-202601-nobody/pay?token=${new URL(`http://x${path}`).searchParams.get('token')}`,
        {},
      ],
      [bare, {}],
      [bare, { method: 'POST' }],
      [wrong, {}],
      [`${bare}?token=not-a-token`, {}],
      [`${bare}?token=`, {}],
      [bare, { headers: { 'x-service-key': otherKey } }],
      [`/v1/invoices/..%2Fkeys/pay`, {}],
      [`/v1/invoices/${invoiceId.toUpperCase()}/pay`, {}],
    ];
    const answers = [];
    for (const [ask, init] of asks) {
      const res = await appFetch(spot.service, ask, init);
      answers.push({ ask, status: res.status, body: await res.text() });
    }
    for (const answer of answers) {
      expect(answer, answer.ask).toMatchObject({
        status: 404,
        body: JSON.stringify({ error: { code: 'invoice_not_found', message: 'No invoice at this link.' } }),
      });
    }
    // Unpaid, a stranger with the link's token gets the 402; it names neither the integrator nor its name.
    const unpaid = await appFetch(spot.service, path);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? '');
    expect(required.resource?.description).toBe('Spotcheck hosted invoice');
    const text = `${JSON.stringify(required)}${await unpaid.text()}`;
    expect(text).not.toContain('Integrator secret');
    expect(text).not.toContain('integrator');
    expect(text).not.toContain(new URL(`http://x${path}`).searchParams.get('token'));
  });

  it("is paid by the integrator's key without the token; after payment only the key is told the transaction", async () => {
    const { key, invoiceId, path, bare } = await invoiced(spot, 'keyed');
    const signature = await signFor(spot, bare, 0, { 'x-service-key': key });
    const paid = await appFetch(spot.service, bare, {
      headers: { 'x-service-key': key, 'payment-signature': signature },
    });
    expect(paid.status).toBe(200);
    const body = (await paid.json()) as { invoice_id: string; payment: { status: string; tx: string } };
    expect(body).toMatchObject({ invoice_id: invoiceId, payment: { status: 'paid', tx: txOf(payer(0)) } });

    const stranger = await appFetch(spot.service, path);
    expect(stranger.status).toBe(409);
    expect(await stranger.json()).toEqual({
      error: { code: 'invoice_paid', message: 'This invoice is paid.' },
    });
    const owner = await appFetch(spot.service, bare, { headers: { authorization: `Bearer ${key}` } });
    expect(owner.status).toBe(409);
    expect(((await owner.json()) as { error: { message: string } }).error.message).toContain(txOf(payer(0)));
    // A paid invoice with a wrong token is still the one 404.
    expect((await appFetch(spot.service, `${bare}?token=${'1'.repeat(32)}`)).status).toBe(404);
  });

  it('claims only after verify: a refused authorization being verified never locks the real payer out', async () => {
    const { invoiceId, path } = await invoiced(spot, 'lockout');
    const attacker = await signFor(spot, path, 1);
    fake.verdicts.set(payer(1), 'invalid');
    const held = gate();
    fake.verifyGates.set(payer(1), held);
    const calls = fake.facilitator.verify.mock.calls.length;
    // Ten replays of the attacker's authorization, each held in verify.
    const replays = Array.from({ length: 10 }, () =>
      appFetch(spot.service, path, { headers: { 'payment-signature': attacker } }),
    );
    await vi.waitFor(() => expect(fake.facilitator.verify.mock.calls.length).toBeGreaterThan(calls), {
      timeout: 20_000,
      interval: 10,
    });
    const real = await appFetch(spot.service, path, {
      headers: { 'payment-signature': await signFor(spot, path, 2) },
    });
    expect(real.status).toBe(200);
    expect(((await real.json()) as { invoice_id: string }).invoice_id).toBe(invoiceId);
    held.open();
    const refused = await Promise.all(replays);
    for (const response of refused) expect(response.status).toBe(402);
    expect(fake.settledBy()).not.toContain(payer(1));
  });

  it('gives the claim back when the settlement is refused before broadcast: the next payer pays', async () => {
    const { path } = await invoiced(spot, 'refused');
    fake.outcomes.set(payer(3), 'refused');
    const first = await appFetch(spot.service, path, {
      headers: { 'payment-signature': await signFor(spot, path, 3) },
    });
    expect(first.status).toBe(402);
    const second = await appFetch(spot.service, path, {
      headers: { 'payment-signature': await signFor(spot, path, 4) },
    });
    expect(second.status).toBe(200);
    expect(((await second.json()) as { payment: { tx: string } }).payment.tx).toBe(txOf(payer(4)));
  });

  it('keeps the claim of a settlement whose outcome is unknown: the next payer gets a 409 and pays nothing', async () => {
    const { key, invoiceId, path } = await invoiced(spot, 'unknown');
    fake.outcomes.set(payer(5), 'unknown');
    const first = await appFetch(spot.service, path, {
      headers: { 'payment-signature': await signFor(spot, path, 5) },
    });
    expect(first.status).toBe(502);
    const settles = fake.facilitator.settle.mock.calls.length;
    const next = await appFetch(spot.service, path, {
      headers: { 'payment-signature': await signFor(spot, path, 0).catch(() => 'unsigned') },
    });
    expect(next.status).toBe(409);
    expect(((await next.json()) as { error: { code: string } }).error.code).toBe('invoice_payment_in_flight');
    expect(fake.facilitator.settle.mock.calls.length).toBe(settles);
    const shown = await appFetch(spot.service, `/v1/invoices/${invoiceId}`, {
      headers: { 'x-service-key': key },
    });
    expect(((await shown.json()) as { payment: { status: string } }).payment.status).toBe('settling');
  });
});

describe.skipIf(postgresMissing !== null)(
  'paying an invoice on two instances of one PostgreSQL',
  { timeout: 180_000 },
  () => {
    let pg: TestPostgres;
    let databaseUrl = '';
    let spots: TestService[] = [];
    let fake: ReturnType<typeof fakeFacilitator>;
    beforeAll(async () => {
      pg = await startPostgres();
      databaseUrl = await pg.createDatabase();
      fake = fakeFacilitator();
      const start = (dataDir: string) =>
        startTestService(
          { DATABASE_URL: databaseUrl },
          { prober: fakeProber(), facilitator: fake.facilitator },
          { listen: false, dataDir },
        );
      const first = await start(mkdtempSync(join(tmpdir(), 'spotcheck-invoice-pg-')));
      // One keys folder (signing key, quota salt) for both, as docs/deploy.md says to run instances.
      const second = mkdtempSync(join(tmpdir(), 'spotcheck-invoice-pg-'));
      cpSync(join(first.dataDir, 'keys'), join(second, 'keys'), { recursive: true });
      spots = [first, await start(second)];
    }, 120_000);
    afterAll(async () => {
      for (const spot of spots) await spot.stop();
      await pg?.stop();
    });

    /** An invoice made on the first instance, served by both. */
    const invoicedOnBoth = async (id: string) => {
      const made = await invoiced(spots[0]!, id);
      const read = await appFetch(spots[1]!.service, `/v1/invoices/${made.invoiceId}`, {
        headers: { 'x-service-key': made.key },
      });
      expect(read.status).toBe(200);
      return made;
    };
    const pay = (n: number, path: string, buyer: number, signature: string) =>
      appFetch(spots[n]!.service, path, {
        headers: { 'payment-signature': signature },
        ip: `198.18.11.${buyer}`,
      });

    it('settles one of two payers at once on two instances; the other gets a 409 and is never settled', async () => {
      const { path, key, invoiceId } = await invoicedOnBoth('twice');
      const signatures = [await signFor(spots[0]!, path, 0), await signFor(spots[1]!, path, 1)];
      // Each settlement is held: the payer that took the invoice stays in its settlement while the other is answered.
      const held = [gate(), gate()];
      fake.settleGates.set(payer(0), held[0]!);
      fake.settleGates.set(payer(1), held[1]!);
      const answers = [pay(0, path, 0, signatures[0]!), pay(1, path, 1, signatures[1]!)];
      // Were both payers let through to settlement (the per-process guard of old), neither could answer: say so.
      let answered = false;
      const bothSettling = (async () => {
        while (!answered) {
          if (fake.settledBy().filter((p) => p === payer(0) || p === payer(1)).length === 2)
            throw new Error('both payers reached settlement');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      const first = await Promise.race([
        ...answers.map((answer, n) => answer.then((response) => ({ response, n }))),
        bothSettling.then(() => ({ response: new Response(null, { status: 599 }), n: -1 })),
      ]).finally(() => {
        answered = true;
      });
      expect(first.response.status).toBe(409);
      expect(((await first.response.json()) as { error: { code: string } }).error.code).toBe(
        'invoice_payment_in_flight',
      );
      const winner = 1 - first.n;
      // Both were verified; only the one holding the claim reached settlement.
      expect(fake.settledBy().filter((p) => p === payer(0) || p === payer(1))).toEqual([payer(winner)]);
      held[0]!.open();
      held[1]!.open();
      const paid = await answers[winner]!;
      expect(paid.status).toBe(200);
      expect(((await paid.json()) as { payment: unknown }).payment).toMatchObject({
        status: 'paid',
        tx: txOf(payer(winner)),
      });
      expect(fake.settledBy().filter((p) => p === payer(0) || p === payer(1))).toEqual([payer(winner)]);
      for (const spot of spots) {
        const shown = await appFetch(spot.service, `/v1/invoices/${invoiceId}`, {
          headers: { 'x-service-key': key },
        });
        expect(((await shown.json()) as { payment: unknown }).payment).toMatchObject({
          status: 'paid',
          tx: txOf(payer(winner)),
          overpayments: [],
        });
      }
    });

    it('lets the claim of an unknown outcome expire, then takes the next payment', async () => {
      const { path, invoiceId } = await invoicedOnBoth('expiry');
      fake.outcomes.set(payer(2), 'unknown');
      expect((await pay(0, path, 2, await signFor(spots[0]!, path, 2))).status).toBe(502);
      const blocked = await appFetch(spots[1]!.service, path);
      expect(blocked.status).toBe(409);
      expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe(
        'invoice_payment_in_flight',
      );
      const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        const [row] = await admin<Array<{ until: string }>>`SELECT claim_until AS until FROM invoices
        WHERE id = ${invoiceId}`;
        // The claim covers the authorization: until its validBefore (five minutes) and a margin.
        expect(Number(row?.until) - Date.now() / 1000).toBeGreaterThan(300);
        await admin`UPDATE invoices SET claim_until = 0 WHERE id = ${invoiceId}`;
      } finally {
        await admin.end();
      }
      const next = await pay(1, path, 3, await signFor(spots[1]!, path, 3));
      expect(next.status).toBe(200);
    });

    it('answers a settlement landing on a paid invoice as overpaid, records it for operator and integrator', async () => {
      const { path, key, invoiceId } = await invoicedOnBoth('overpaid');
      const held = gate();
      fake.settleGates.set(payer(4), held);
      const slow = pay(0, path, 4, await signFor(spots[0]!, path, 4));
      await vi.waitFor(() => expect(fake.settledBy()).toContain(payer(4)), { timeout: 20_000, interval: 10 });
      // The slow payer's claim lapses (a clock far off), and another payer takes the invoice and pays it.
      const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        await admin`UPDATE invoices SET claim_until = 0 WHERE id = ${invoiceId}`;
      } finally {
        await admin.end();
      }
      const fast = await pay(1, path, 5, await signFor(spots[1]!, path, 5));
      expect(fast.status).toBe(200);
      held.open();
      const late = await slow;
      expect(late.status).toBe(200);
      const body = (await late.json()) as { payment: { status: string; tx: string }; message: string };
      expect(body.payment).toMatchObject({ status: 'overpaid', tx: txOf(payer(4)) });
      expect(body.message).toContain('overpayment');
      expect(JSON.stringify(body)).not.toContain(txOf(payer(5)));

      const over = { tx: txOf(payer(4)), payer: payer(4), amount: { atomic: '40000', usd: '0.04' } };
      const shown = await appFetch(spots[1]!.service, `/v1/invoices/${invoiceId}`, {
        headers: { 'x-service-key': key },
      });
      expect(((await shown.json()) as { payment: unknown }).payment).toMatchObject({
        status: 'paid',
        tx: txOf(payer(5)),
        overpayments: [over],
      });
      const me = await appFetch(spots[0]!.service, '/v1/integrators/me', {
        headers: { 'x-service-key': key },
      });
      expect(((await me.json()) as { previous_months: unknown[] }).previous_months[0]).toMatchObject({
        invoice: { id: invoiceId, status: 'paid', tx: txOf(payer(5)), overpayments: [over] },
      });
      const listed = await runCli('invoices-cli.ts', ['--overpayments'], spots[0]!.dataDir, {
        DATABASE_URL: databaseUrl,
      });
      expect(listed.stderr).toBe('');
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({
          invoice: invoiceId,
          integrator: 'overpaid',
          tx: txOf(payer(4)),
          payer: payer(4),
          amount_atomic: '40000',
        }),
      ]);
    });
  },
);
