/**
 * The deployment guide run as written (issue 10 items 3 and 4): three instances on one PostgreSQL behind a real
 * nginx configured with docs/deploy.md's own `nginx` block (`test/helpers/nginx.ts`). Clients reach only nginx, each
 * from its own loopback address, so the client address the instances count is the one nginx saw: a client cannot
 * buy itself more free checks with an `X-Forwarded-For` of its own, and a SIGKILL of one instance behind the proxy
 * loses no answer the proxy delivered.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployGuideConfig, getFrom, nginxMissing, startNginx, type TestNginx } from '../helpers/nginx.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { unservedReceipts } from '../helpers/receipts.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { type PaidWorld, startPaidWorld, worldEnv } from '../helpers/world.ts';

// Spec §8 literal, never read from core/limits.ts.
const FREE_CHECKS = 5;
const PRICE = 20000n;
const KEY = 'instances-nginx-exempt-key-0123456789';
const PATH = '/v1/products/endpoint-spot-check';

/** A check of an address the SSRF gate refuses: an answer (verdict `skip`) that needs no network. */
const checkPath = (n: number) => `${PATH}?url=${encodeURIComponent(`http://10.9.${n & 255}.1/x`)}`;

describe.skipIf(postgresMissing !== null || nginxMissing !== null)(
  'three instances behind nginx, configured as docs/deploy.md says',
  { timeout: 240_000 },
  () => {
    let pg: TestPostgres;
    let proxy: TestNginx;
    let paid: PaidWorld;
    const root = mkdtempSync(join(tmpdir(), 'spotcheck-nginx-'));
    const dirs = [0, 1, 2].map((n) => join(root, `instance-${n}`));
    const ports: number[] = [];
    const running: ServerProcess[] = [];
    let env: Record<string, string> = {};

    beforeAll(async () => {
      pg = await startPostgres();
      paid = await startPaidWorld({ buyers: 1 });
      env = {
        ...worldEnv(paid.world.state),
        DATABASE_URL: await pg.createDatabase(),
        EXEMPT_KEYS: `partner:${KEY}`,
        PROBE_ALLOW_CIDRS: '127.0.0.0/8',
      };
      for (let n = 0; n < 4; n++) ports.push(await freePort());
      // The first instance makes the keys folder; the others start with a copy of it (docs/deploy.md step 2).
      running.push(await startServerProcess(dirs[0]!, ports[0]!, env));
      for (const n of [1, 2]) cpSync(join(dirs[0]!, 'keys'), join(dirs[n]!, 'keys'), { recursive: true });
      running.push(...(await Promise.all([1, 2].map((n) => startServerProcess(dirs[n]!, ports[n]!, env)))));
      proxy = await startNginx(
        join(root, 'nginx'),
        ports[3]!,
        deployGuideConfig(ports.slice(0, 3), ports[3]!),
      );
    }, 240_000);
    afterAll(async () => {
      await proxy?.stop();
      for (const service of running) service.child.kill('SIGKILL');
      await Promise.all(running.map((service) => service.exited));
      await paid?.stop();
      await pg?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it('counts the address nginx saw: 5 free answers of 100 parallel checks, whatever X-Forwarded-For says', async () => {
      // Each request claims another client address; nginx replaces the header with the address it saw.
      const spoofing = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          getFrom('127.0.0.2', `${proxy.base}${checkPath(i)}`, { 'x-forwarded-for': `198.51.100.${i}` }),
        ),
      );
      const statuses = spoofing.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(FREE_CHECKS);
      expect(statuses.filter((status) => status === 402)).toHaveLength(100 - FREE_CHECKS);
      const used = spoofing
        .filter((answer) => answer.status === 200)
        .map((answer) => (JSON.parse(answer.body) as { access: { free_used_today: number } }).access);
      expect(used.map((access) => access.free_used_today).sort()).toEqual([1, 2, 3, 4, 5]);

      // Another client behind the same proxy has its own quota.
      const other = await Promise.all(
        Array.from({ length: 10 }, (_, i) => getFrom('127.0.0.3', `${proxy.base}${checkPath(i)}`)),
      );
      expect(other.filter((answer) => answer.status === 200)).toHaveLength(FREE_CHECKS);
    });

    it('carries a payment through: the 402 and its PAYMENT-REQUIRED, the PAYMENT-SIGNATURE, then refuses its replay', async () => {
      const check = `${proxy.base}${PATH}?${new URLSearchParams({ url: paid.world.sellers.urls['sdk-ok'] })}`;
      // A fresh client, its free checks used up, meets the 402 through the proxy.
      for (let i = 0; i < FREE_CHECKS; i++) expect((await getFrom('127.0.0.5', check)).status).toBe(200);
      const challenge = await getFrom('127.0.0.5', check);
      expect(challenge.status).toBe(402);
      const required = challenge.headers['payment-required'];
      expect(typeof required).toBe('string');
      const header = await paid.sign(0, decodePaymentRequiredHeader(required as string));
      const before = await paid.balances(0);

      const answer = await getFrom('127.0.0.5', check, { 'payment-signature': header });
      expect(answer.status).toBe(200);
      const body = JSON.parse(answer.body) as { receipt_id: string; access: { tier: string } };
      expect(body.access.tier).toBe('paid');
      expect(typeof answer.headers['payment-response']).toBe('string');
      const replay = await getFrom('127.0.0.5', check, { 'payment-signature': header });
      expect(replay.status).toBe(402);
      expect(JSON.parse(replay.body)).toMatchObject({ error: 'payment_already_used' });
      const after = await paid.balances(0);
      expect(after.service - before.service).toBe(PRICE);
      expect(await unservedReceipts(proxy.base, [body.receipt_id])).toEqual({ missing: [], invalid: [] });
    });

    it('loses no answer nginx delivered while one instance is killed, and routes to it again once restarted', async () => {
      const delivered: string[] = [];
      let failed = 0;
      let n = 0;
      let killedAt = -1;
      const worker = async () => {
        while (killedAt < 0 || delivered.length < killedAt + 150) {
          const answer = await getFrom('127.0.0.4', `${proxy.base}${checkPath(n++)}`, {
            'x-service-key': KEY,
          });
          if (answer.status === 200)
            delivered.push((JSON.parse(answer.body) as { receipt_id: string }).receipt_id);
          // The proxy's answer for a request the killed instance held (502): never an acknowledged receipt.
          else failed++;
          if (delivered.length >= 150 && killedAt < 0) {
            killedAt = delivered.length;
            running[0]!.child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      await running[0]!.exited;
      expect(delivered.length).toBeGreaterThanOrEqual(300);
      // Requests in flight at the killed instance at most, and those nginx sent it before marking it down.
      expect(failed).toBeLessThan(50);
      expect(await unservedReceipts(proxy.base, delivered)).toEqual({ missing: [], invalid: [] });

      running[0] = await startServerProcess(dirs[0]!, ports[0]!, env);
      expect(await unservedReceipts(running[0].base, delivered)).toEqual({ missing: [], invalid: [] });
      // Back in the upstream once its fail_timeout (5 s) has passed: answers come from all three again.
      await new Promise((resolve) => setTimeout(resolve, 5500));
      const after = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          getFrom('127.0.0.4', `${proxy.base}${checkPath(i)}`, { 'x-service-key': KEY }),
        ),
      );
      expect(after.map((answer) => answer.status)).toEqual(Array.from({ length: 30 }, () => 200));
    });
  },
);
