/**
 * Watches on three instances behind the nginx of docs/deploy.md ("Three instances behind nginx", `test/helpers/nginx.ts`),
 * on one PostgreSQL: watches are made and read only through nginx, and one instance is SIGKILLed. The survivors
 * probe every watched seller again within one interval, each wallet change reaches the receiver once per attempt (as
 * many requests as distinct `webhook-id`s, one per watch), and the poll route through nginx shows the same ids. The
 * interval and the probe lease are short (`WATCH_INTERVAL_S`, `WATCH_LEASE_MS`), as in `instances-watches.test.ts`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployGuideConfig, nginxMissing, startNginx, type TestNginx } from '../helpers/nginx.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Receiver, startReceiver, startSwitchableSeller } from '../helpers/webhooks.ts';

const KEY = 'nginx-watches-exempt-key-0123456789';
const INTERVAL_S = 4;
const LEASE_MS = 3000;
/** What a loaded 2-core machine may add to a deadline: a pass starts at most every second, processes are slow. */
const SLACK_MS = 4000;
const W = (n: number) => `0x7a11000000000000000000000000000000000${String(n).padStart(3, '0')}`;

type Seller = Awaited<ReturnType<typeof startSwitchableSeller>>;
type Made = { id: string; token: string };

describe.skipIf(postgresMissing !== null || nginxMissing !== null)(
  'watches on three instances behind nginx, one SIGKILLed',
  { timeout: 240_000 },
  () => {
    let pg: TestPostgres;
    let sql: ReturnType<typeof postgres>;
    let proxy: TestNginx;
    let receiver: Receiver;
    const root = mkdtempSync(join(tmpdir(), 'spotcheck-nginx-watches-'));
    const dirs = [0, 1, 2].map((n) => join(root, `instance-${n}`));
    const instances: ServerProcess[] = [];
    const sellers: Seller[] = [];

    beforeAll(async () => {
      pg = await startPostgres();
      const databaseUrl = await pg.createDatabase();
      sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
      const env = {
        DATABASE_URL: databaseUrl,
        EXEMPT_KEYS: `partner:${KEY}`,
        PROBE_ALLOW_CIDRS: '127.0.0.0/8',
        WATCH_INTERVAL_S: String(INTERVAL_S),
        WATCH_LEASE_MS: String(LEASE_MS),
      };
      const ports = [await freePort(), await freePort(), await freePort(), await freePort()];
      // The first instance makes the keys folder; the others start with a copy of it (docs/deploy.md).
      instances.push(await startServerProcess(dirs[0]!, ports[0]!, env));
      for (const n of [1, 2]) cpSync(join(dirs[0]!, 'keys'), join(dirs[n]!, 'keys'), { recursive: true });
      instances.push(...(await Promise.all([1, 2].map((n) => startServerProcess(dirs[n]!, ports[n]!, env)))));
      proxy = await startNginx(
        join(root, 'nginx'),
        ports[3]!,
        deployGuideConfig(ports.slice(0, 3), ports[3]!, { failTimeoutSeconds: 1 }),
      );
      receiver = await startReceiver(200);
    }, 240_000);
    afterAll(async () => {
      await proxy?.stop();
      for (const instance of instances) instance.child.kill('SIGKILL');
      await Promise.all(instances.map((instance) => instance.exited));
      await Promise.all(sellers.map((s) => s.close()));
      await receiver?.close();
      await sql?.end();
      await pg?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    /** A request through nginx; a 502 (the killed instance, until nginx keeps it out) is asked again. */
    const viaProxy = (path: string, init: RequestInit = {}) =>
      waitFor(
        async () => {
          const answer = await fetch(`${proxy.base}${path}`, init);
          return answer.status === 502 ? null : answer;
        },
        { what: `${init.method ?? 'GET'} ${path} through nginx`, intervalMs: 100 },
      );
    const make = async (url: string): Promise<Made> => {
      const answer = await viaProxy('/v1/watches', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-key': KEY },
        body: JSON.stringify({ url, webhook_url: receiver.url }),
      });
      expect(answer.status).toBe(201);
      return (await answer.json()) as Made;
    };
    const eventsOf = async (watch: Made) =>
      (
        (await (
          await viaProxy(`/v1/watches/${watch.id}/events`, { headers: { 'x-watch-token': watch.token } })
        ).json()) as { events: Array<{ id: string; event: string }> }
      ).events;
    const ids = () => new Set(receiver.received.map((r) => r.headers['webhook-id'] ?? ''));
    const probedAgain = (since: number, times: number, what: string) =>
      waitFor(() => sellers.every((s) => s.probes.filter((t) => t > since).length >= times), {
        what,
        timeoutMs: (INTERVAL_S * 1.1 * times + 30) * 1000,
      });

    it('keeps probing and delivers each change once per attempt after an instance is SIGKILLed', async () => {
      for (let n = 0; n < 4; n++) sellers.push(await startSwitchableSeller(W(1)));
      // Two watches per seller, each made through nginx (which hands them to the instances in turn).
      const watches: Made[] = [];
      for (const seller of sellers) for (let k = 0; k < 2; k++) watches.push(await make(seller.url));
      await probedAgain(0, 1, 'the first probe of every seller');
      await waitFor(
        async () => {
          const [row] = await sql`SELECT count(*)::int AS n FROM watch_endpoints WHERE states IS NOT NULL`;
          return Number(row?.n) === sellers.length;
        },
        { what: 'the baseline state of every endpoint', timeoutMs: 30_000 },
      );
      expect(receiver.received).toEqual([]);

      instances[0]!.child.kill('SIGKILL');
      await instances[0]!.exited;
      const killedAt = Date.now();
      // Every seller is probed by a survivor within one interval (a lease the dead instance held ends before).
      const deadline = INTERVAL_S * 1.1 * 1000 + SLACK_MS;
      for (const seller of sellers) {
        const next = await waitFor(() => seller.probes.find((t) => t > killedAt), {
          what: `a probe of ${seller.url} by a survivor`,
          timeoutMs: deadline + 60_000,
        });
        expect(next - killedAt).toBeLessThanOrEqual(deadline);
      }

      for (const seller of sellers) seller.wallet.payTo = W(2);
      await waitFor(() => ids().size >= watches.length, {
        what: `the ${watches.length} terms_changed events`,
        timeoutMs: (INTERVAL_S * 1.1 + 20) * 1000,
      });
      // Two more probes of every seller: a second event of the same change would be made by now.
      await probedAgain(Date.now(), 2, 'two more probes of every seller');
      await waitFor(
        async () => {
          const [row] = await sql`SELECT count(*)::int AS n FROM watch_outbox WHERE state = 'pending'`;
          return Number(row?.n) === 0;
        },
        { what: 'an empty outbox', timeoutMs: 30_000 },
      );
      expect(ids().size).toBe(watches.length);
      // The receiver answers 200: one attempt per event, so one request per id.
      expect(receiver.received).toHaveLength(watches.length);
      for (const watch of watches) {
        const events = await eventsOf(watch);
        expect(events.map((e) => e.event)).toEqual(['terms_changed']);
        expect(ids().has(events[0]!.id)).toBe(true);
      }
    });
  },
);
