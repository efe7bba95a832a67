/**
 * An invoice is settled at most once across instances: two instances of the service (`api/main.ts` in child
 * processes) on one PostgreSQL and the sandbox chain, two buyers paying the same invoice at the same moment, one on
 * each instance, with the official x402 client. Exactly one USDC transfer, one `paid`, and the other buyer gets a
 * 409 with no money moved. Several invoices, so a race that lets both through is not missed by luck.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../io/keys.ts';
import { loadSalt } from '../../io/secrets.ts';
import { runCli } from '../helpers/cli.ts';
import { integratorOnDatabase, previousMonth } from '../helpers/integrators.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { type PaidWorld, startPaidWorld, worldEnv } from '../helpers/world.ts';

/** 1,500 hosted calls in a month: 500 past the free allowance at USD 0.02 (docs/api.md §8), USD 10. */
const TOTAL = 10_000_000n;
const INVOICES = ['racea', 'raceb', 'racec'];

describe.skipIf(postgresMissing !== null)(
  'an invoice paid at once on two instances',
  { timeout: 240_000 },
  () => {
    let pg: TestPostgres;
    let databaseUrl = '';
    let paid: PaidWorld;
    const dirs = [0, 1].map((n) => mkdtempSync(join(tmpdir(), `spotcheck-invoice-${n}-`)));
    let instances: ServerProcess[] = [];

    beforeAll(async () => {
      pg = await startPostgres();
      databaseUrl = await pg.createDatabase();
      paid = await startPaidWorld({ buyers: 2 });
      const keys = join(dirs[0]!, 'keys');
      await loadSigningKeys({ dir: keys });
      await loadSalt(keys);
      cpSync(keys, join(dirs[1]!, 'keys'), { recursive: true });
      const env = {
        ...worldEnv(paid.world.state),
        DATABASE_URL: databaseUrl,
        PROBE_ALLOW_CIDRS: '127.0.0.0/8',
      };
      const ports = [await freePort(), await freePort()];
      instances = await Promise.all(dirs.map((dir, n) => startServerProcess(dir, ports[n]!, env)));
    }, 240_000);
    afterAll(async () => {
      for (const instance of instances) instance.child.kill('SIGKILL');
      await Promise.all(instances.map((instance) => instance.exited));
      await paid?.stop();
      await pg?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('settles each invoice once: one transfer, one paid, the other buyer a 409 with no money moved', async () => {
      const month = previousMonth();
      const keys = new Map<string, string>();
      for (const id of INVOICES) {
        keys.set(
          id,
          await integratorOnDatabase(
            dirs[0]!,
            databaseUrl,
            id,
            '100',
            instances.map((i) => i.base),
          ),
        );
      }
      const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        for (const id of INVOICES)
          await admin`INSERT INTO hosted_usage (integrator, month, calls) VALUES (${id}, ${month}, 1500)`;
      } finally {
        await admin.end();
      }
      const run = await runCli('invoices-cli.ts', ['--month', month], dirs[1]!, {
        DATABASE_URL: databaseUrl,
      });
      expect(run.stderr).toBe('');

      for (const integrator of INVOICES) {
        const id = `inv-${month.replace('-', '')}-${integrator}`;
        const read = await fetch(`${instances[0]!.base}/v1/invoices/${id}`, {
          headers: { 'x-service-key': keys.get(integrator) ?? '' },
        });
        expect(read.status).toBe(200);
        const invoice = (await read.json()) as {
          invoice: { pay_url: string; total: { atomic: string } };
          payment: { pay_url?: string };
        };
        expect(invoice.invoice.total.atomic).toBe(TOTAL.toString());
        // The link the integrator hands its payer; the same path on each instance.
        const link = new URL(invoice.payment.pay_url ?? invoice.invoice.pay_url);
        const on = (instance: ServerProcess) => `${instance.base}${link.pathname}${link.search}`;

        const before = [await paid.balances(0), await paid.balances(1)];
        const answers = await Promise.all(
          [0, 1].map((buyer) =>
            paid.payingFetch(buyer, { maxUsd: '10', ip: `198.18.10.${buyer + 1}` })(on(instances[buyer]!)),
          ),
        );
        const statuses = answers.map((r) => r.status).sort();
        expect(statuses, integrator).toEqual([200, 409]);
        const winner = answers.findIndex((r) => r.status === 200);
        const loser = 1 - winner;
        const body = (await answers[winner]!.json()) as { payment: { status: string; tx: string } };
        expect(body.payment.status).toBe('paid');
        const refused = (await answers[loser]!.json()) as { error: { code: string; message: string } };
        expect(['invoice_payment_in_flight', 'invoice_paid']).toContain(refused.error.code);
        // A stranger's 409 names no transaction.
        expect(JSON.stringify(refused)).not.toMatch(/0x[0-9a-f]{64}/);

        const after = [await paid.balances(0), await paid.balances(1)];
        expect(after[0]!.service - before[0]!.service).toBe(TOTAL);
        expect(before[winner]!.buyer - after[winner]!.buyer).toBe(TOTAL);
        expect(before[loser]!.buyer - after[loser]!.buyer).toBe(0n);
        expect(await paid.transfers(body.payment.tx as `0x${string}`)).toEqual([
          { from: paid.buyer(winner).address, to: paid.world.state.serviceWallet, value: TOTAL },
        ]);

        // Every instance shows it paid with that one transaction, and no overpayment.
        for (const instance of instances) {
          const shown = (await (
            await fetch(`${instance.base}/v1/invoices/${id}`, {
              headers: { 'x-service-key': keys.get(integrator) ?? '' },
            })
          ).json()) as { payment: { status: string; tx: string; overpayments?: unknown[] } };
          expect(shown.payment).toMatchObject({ status: 'paid', tx: body.payment.tx });
          expect(shown.payment.overpayments ?? []).toEqual([]);
        }
      }
    });
  },
);
