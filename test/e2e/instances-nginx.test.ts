/**
 * The deployment guide run as written: three instances on one PostgreSQL behind a real
 * nginx configured with docs/deploy.md's own `nginx` block (`test/helpers/nginx.ts`). Clients reach only nginx, each
 * from its own loopback address, so the client address the instances count is the one nginx saw: a client cannot
 * buy itself more free checks with an `X-Forwarded-For` of its own, and a SIGKILL of one instance behind the proxy
 * loses no answer the proxy delivered, nor lets many clients past a quota, a network ceiling or the hosted rate
 * limit while it happens.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integratorOnDatabase } from '../helpers/integrators.ts';
import { deployGuideConfig, getFrom, nginxMissing, startNginx, type TestNginx } from '../helpers/nginx.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { unservedReceipts } from '../helpers/receipts.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { type PaidWorld, startPaidWorld, worldEnv } from '../helpers/world.ts';

// docs/api.md §8 literal, never read from core/limits.ts.
const FREE_CHECKS = 5;
const FREE_PER_NETWORK = 25;
const RATE_PER_MINUTE = 120;
const PRICE = 20000n;
const KEY = 'instances-nginx-exempt-key-0123456789';
const PATH = '/v1/products/endpoint-spot-check';
/**
 * nginx's `fail_timeout`, injected in place of the guide's 5 s (`deployGuideConfig`): how long a failed instance stays
 * out of the upstream, which the tests wait out each time an instance is restarted.
 */
const FAIL_TIMEOUT_S = 1;

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
        deployGuideConfig(ports.slice(0, 3), ports[3]!, { failTimeoutSeconds: FAIL_TIMEOUT_S }),
      );
    }, 240_000);
    /** Whether instance `n` journaled receipt `id`: each instance journals only the checks it answered. */
    const journaledBy = (n: number, id: string) => {
      const journal = join(dirs[n]!, 'journal');
      return readdirSync(journal).some(
        (file) => file.endsWith('.jsonl') && readFileSync(join(journal, file), 'utf8').includes(id),
      );
    };
    /**
     * Resolves once nginx hands the restarted instance 0 a check again: its `fail_timeout` (FAIL_TIMEOUT_S after the
     * failure that marked it down) has passed and the check it was tried with succeeded. The checks that show it use the
     * exempt key from an address no quota of the tests counts.
     */
    let probe = 5000;
    const backInUpstream = () =>
      waitFor(
        async () => {
          const answer = await getFrom('127.0.0.7', `${proxy.base}${checkPath(probe++)}`, {
            'x-service-key': KEY,
          });
          if (answer.status !== 200) throw new Error(`status ${answer.status}: ${answer.body}`);
          return journaledBy(0, (JSON.parse(answer.body) as { receipt_id: string }).receipt_id);
        },
        { what: 'nginx to hand the restarted instance 0 a check', timeoutMs: 60_000, intervalMs: 100 },
      );

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
      // A survivor serves every answer nginx delivered (they share the database). Asked directly: through nginx, a
      // request would go to the killed instance again once its fail_timeout had passed, and come back a 502.
      expect(await unservedReceipts(running[1]!.base, delivered)).toEqual({ missing: [], invalid: [] });

      running[0] = await startServerProcess(dirs[0]!, ports[0]!, env);
      expect(await unservedReceipts(running[0].base, delivered)).toEqual({ missing: [], invalid: [] });
      // Back in the upstream once its fail_timeout has passed: answers come from all three again.
      await backInUpstream();
      const after = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          getFrom('127.0.0.4', `${proxy.base}${checkPath(i)}`, { 'x-service-key': KEY }),
        ),
      );
      expect(after.map((answer) => answer.status)).toEqual(Array.from({ length: 30 }, () => 200));
    });

    it('keeps the free quotas, the ceiling of a network and the hosted rate limit exact for 48 clients while an instance is killed and restarted', async () => {
      const key = await integratorOnDatabase(
        dirs[1]!,
        env.DATABASE_URL!,
        'router',
        '1000',
        running.map((service) => service.base),
      );
      type Tally = { ok: number; refused: number; lost: number };
      const tally = (): Tally => ({ ok: 0, refused: 0, lost: 0 });
      // 40 clients, each from a /24 of its own, and 8 more sharing one /24 (its ceiling is 25 free checks a day).
      const clients = Array.from({ length: 40 }, (_, i) => `127.${20 + i}.0.1`);
      const neighbours = Array.from({ length: 8 }, (_, i) => `127.9.9.${i + 1}`);
      const free = new Map([...clients, ...neighbours].map((client) => [client, tally()]));
      const hosted = tally();
      const delivered: string[] = [];
      // Answers lost, per wave: while instance 0 is killed, while it is down, once it is back.
      const lostIn = [0, 0, 0];
      let current = 0;
      let n = 1000;
      /** One check through nginx; a 502 or a reset is an answer the killed instance never gave. */
      const send = async (
        client: string,
        into: Tally,
        refusal: number,
        headers: Record<string, string> = {},
      ) => {
        try {
          const answer = await getFrom(client, `${proxy.base}${checkPath(n++)}`, headers);
          if (answer.status === 200) {
            into.ok++;
            delivered.push((JSON.parse(answer.body) as { receipt_id: string }).receipt_id);
          } else if (answer.status === refusal) into.refused++;
          else {
            into.lost++;
            lostIn[current]!++;
          }
        } catch {
          into.lost++;
          lostIn[current]!++;
        }
      };
      // Each client sends 8 free checks and the router 150 hosted ones, in three waves: while instance 0 is
      // killed, while it is down, and once it is back in nginx's upstream.
      const wave = (perClient: number, hostedCalls: number) =>
        Promise.all([
          ...[...clients, ...neighbours].flatMap((client) =>
            Array.from({ length: perClient }, () => send(client, free.get(client)!, 402)),
          ),
          ...Array.from({ length: hostedCalls }, () =>
            send('127.0.0.6', hosted, 429, { authorization: `Bearer ${key}` }),
          ),
        ]);
      const first = wave(3, 50);
      await waitFor(() => delivered.length >= 40, { what: '40 answers of the first wave', intervalMs: 2 });
      running[0]!.child.kill('SIGKILL');
      await first;
      await running[0]!.exited;
      current = 1;
      const down = Date.now();
      await wave(3, 50);
      const downSeconds = (Date.now() - down) / 1000;
      running[0] = await startServerProcess(dirs[0]!, ports[0]!, env);
      await backInUpstream();
      current = 2;
      await wave(2, 50);
      // Lost: what nginx had handed the killed instance (its round robin gives it a third of the first wave), while
      // it is down one request per fail_timeout (each tries it again and shows nginx it is still down), and
      // nothing once it is back.
      expect(lostIn[0]).toBeLessThanOrEqual(Math.ceil((48 * 3 + 50) / 3));
      expect(lostIn[1]).toBeLessThanOrEqual(1 + Math.ceil(downSeconds / FAIL_TIMEOUT_S));
      expect(lostIn[2]).toBe(0);

      // Never one answer too many. A unit taken for an answer the killed instance never gave stays counted, so a
      // client refused had at most that many fewer answers than its 5.
      const network = tally();
      for (const client of neighbours) {
        const counts = free.get(client)!;
        network.ok += counts.ok;
        network.lost += counts.lost;
        free.delete(client);
      }
      expect(network.ok).toBeLessThanOrEqual(FREE_PER_NETWORK);
      expect(network.ok + network.lost).toBeGreaterThanOrEqual(FREE_PER_NETWORK);
      for (const [client, counts] of free) {
        expect(counts.ok, client).toBeLessThanOrEqual(FREE_CHECKS);
        expect(counts.ok + counts.refused + counts.lost, client).toBe(8);
        expect(counts.ok + counts.lost, client).toBeGreaterThanOrEqual(FREE_CHECKS);
      }
      expect(hosted.ok).toBeLessThanOrEqual(RATE_PER_MINUTE);
      expect(hosted.ok + hosted.lost).toBeGreaterThanOrEqual(RATE_PER_MINUTE);
      expect(hosted.ok + hosted.refused + hosted.lost).toBe(150);
      // The month's usage counts every answer, and at most the uses the killed instance took without answering.
      const me = await getFrom('127.0.0.6', `${proxy.base}/v1/integrators/me`, { 'x-service-key': key });
      const calls = (JSON.parse(me.body) as { current_month: { calls: number } }).current_month.calls;
      expect(calls).toBeGreaterThanOrEqual(hosted.ok);
      expect(calls).toBeLessThanOrEqual(hosted.ok + hosted.lost);
      expect(await unservedReceipts(proxy.base, delivered)).toEqual({ missing: [], invalid: [] });
    });
  },
);
