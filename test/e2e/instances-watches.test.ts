/**
 * Watches on three instances sharing one PostgreSQL (docs/deploy.md "Watches with several instances"): real child
 * processes (`api/main.ts`), watched sellers and a webhook receiver on loopback. Each change of a watched seller
 * reaches the receiver once per attempt: as many requests as distinct `webhook-id`s, one per watch and change, and
 * the same ids on the poll route. When an instance is SIGKILLed in the middle of its probes, the survivors probe
 * its endpoints again within one interval (plus 10 % jitter and a few seconds of a loaded machine). The interval and
 * the lease are short (the lease below the interval, as 15 s is below the default 600 s).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../io/keys.ts';
import { loadSalt } from '../../io/secrets.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Receiver, startReceiver, startSwitchableSeller } from '../helpers/webhooks.ts';

const KEY = 'instances-watches-exempt-key-0123456789';
/**
 * A short interval and a probe lease below it (WATCH_LEASE_MS; docs/deploy.md): a dead instance's leases end
 * within one interval, as they do with the defaults (600 s, 15 s), without the file waiting out 15-second intervals.
 */
const INTERVAL_S = 4;
const LEASE_MS = 3000;
/** What a loaded 2-core machine may add to a deadline: a pass starts at most every second, processes are slow. */
const SLACK_MS = 4000;
const W = (n: number) => `0x7a11000000000000000000000000000000000${String(n).padStart(3, '0')}`;

type Seller = Awaited<ReturnType<typeof startSwitchableSeller>>;
type Made = { id: string; token: string };

describe.skipIf(postgresMissing !== null)('watches on three instances', { timeout: 240_000 }, () => {
  let pg: TestPostgres;
  let sql: ReturnType<typeof postgres>;
  const dirs = [0, 1, 2].map((n) => mkdtempSync(join(tmpdir(), `spotcheck-watch-instance-${n}-`)));
  const instances: ServerProcess[] = [];
  const sellers: Seller[] = [];
  let receiver: Receiver;

  beforeAll(async () => {
    pg = await startPostgres();
    const databaseUrl = await pg.createDatabase();
    sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
    const keys = join(dirs[0]!, 'keys');
    await loadSigningKeys({ dir: keys });
    await loadSalt(keys);
    for (const dir of dirs.slice(1)) cpSync(keys, join(dir, 'keys'), { recursive: true });
    const env = {
      DATABASE_URL: databaseUrl,
      EXEMPT_KEYS: `partner:${KEY}`,
      PROBE_ALLOW_CIDRS: '127.0.0.0/8',
      WATCH_INTERVAL_S: String(INTERVAL_S),
      WATCH_LEASE_MS: String(LEASE_MS),
    };
    const ports = [await freePort(), await freePort(), await freePort()];
    instances.push(...(await Promise.all(dirs.map((dir, n) => startServerProcess(dir, ports[n]!, env)))));
    receiver = await startReceiver(200);
  }, 240_000);
  afterAll(async () => {
    for (const instance of instances) {
      instance.child.kill('SIGCONT');
      instance.child.kill('SIGKILL');
    }
    await Promise.all(instances.map((instance) => instance.exited));
    await Promise.all(sellers.map((s) => s.close()));
    await receiver?.close();
    await sql?.end();
    await pg?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const make = async (base: string, url: string): Promise<Made> => {
    const res = await fetch(`${base}/v1/watches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': KEY },
      body: JSON.stringify({ url, webhook_url: receiver.url }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Made;
  };
  const eventsOf = async (base: string, watch: Made) =>
    (
      (await (
        await fetch(`${base}/v1/watches/${watch.id}/events`, { headers: { 'x-watch-token': watch.token } })
      ).json()) as { events: Array<{ id: string; event: string }> }
    ).events;
  /** Resolves once every seller was probed `times` more times after `since` (each probe a chance to duplicate). */
  const probedAgain = (list: Seller[], since: number, times: number, what: string) =>
    waitFor(() => list.every((s) => s.probes.filter((t) => t > since).length >= times), {
      what,
      timeoutMs: (INTERVAL_S * 1.1 * times + 30) * 1000,
    });
  const ids = () => new Set(receiver.received.map((r) => r.headers['webhook-id'] ?? ''));

  it('delivers each change of a watched seller once per attempt, whichever instance probes it', async () => {
    for (let n = 0; n < 4; n++) sellers.push(await startSwitchableSeller(W(1)));
    // Two watches per seller, made on different instances.
    const watches: Array<{ watch: Made; seller: Seller }> = [];
    for (const [n, seller] of sellers.entries()) {
      for (const k of [0, 1]) {
        watches.push({ watch: await make(instances[(n + k) % 3]!.base, seller.url), seller });
      }
    }
    // The baseline: every endpoint probed once (a receipt, no event).
    await probedAgain(sellers, 0, 1, 'the first probe of every seller');
    await waitFor(
      async () => {
        const [row] = await sql`SELECT count(*)::int AS n FROM watch_endpoints WHERE states IS NOT NULL`;
        return Number(row?.n) === sellers.length;
      },
      { what: 'the baseline state of every endpoint', timeoutMs: 30_000 },
    );
    expect(receiver.received).toEqual([]);

    for (const [round, wallet] of [W(2), W(3)].entries()) {
      for (const seller of sellers) seller.wallet.payTo = wallet;
      const expected = watches.length * (round + 1);
      await waitFor(() => ids().size >= expected, {
        what: `the ${expected} events of round ${round + 1}`,
        timeoutMs: (INTERVAL_S * 1.1 + 20) * 1000,
      });
      // Two more probes of every seller by whichever instance: a second event would be made by now.
      await probedAgain(sellers, Date.now(), 2, 'two more probes of every seller');
      await waitFor(
        async () => {
          const [row] = await sql`SELECT count(*)::int AS n FROM watch_outbox WHERE state = 'pending'`;
          return Number(row?.n) === 0;
        },
        { what: 'an empty outbox', timeoutMs: 30_000 },
      );
      expect(ids().size).toBe(expected);
      // The receiver answers 200: one attempt per event, so one request per id.
      expect(receiver.received).toHaveLength(expected);
    }
    for (const { watch } of watches) {
      const events = await eventsOf(instances[2]!.base, watch);
      expect(events.map((e) => e.event)).toEqual(['terms_changed', 'terms_changed']);
      for (const e of events) expect(ids().has(e.id)).toBe(true);
    }
  });

  it('probes a SIGKILLed instance’s endpoints from the survivors within one interval', async () => {
    // Only instance 0 runs while the new endpoints are first taken: every one of their leases is its own.
    for (const n of [1, 2]) instances[n]!.child.kill('SIGSTOP');
    const heldSellers: Seller[] = [];
    for (let n = 0; n < 3; n++) {
      const seller = await startSwitchableSeller(W(1));
      seller.hold.on = true;
      heldSellers.push(seller);
      sellers.push(seller);
      await make(instances[0]!.base, seller.url);
    }
    await probedAgain(heldSellers, 0, 1, 'instance 0 probing every new seller (held open)');
    for (const n of [1, 2]) instances[n]!.child.kill('SIGCONT');
    instances[0]!.child.kill('SIGKILL');
    await instances[0]!.exited;
    const killedAt = Date.now();
    for (const seller of heldSellers) seller.release();

    const deadline = INTERVAL_S * 1.1 * 1000 + SLACK_MS;
    for (const seller of sellers) {
      const next = await waitFor(() => seller.probes.find((t) => t > killedAt), {
        what: `a probe of ${seller.url} by a survivor`,
        timeoutMs: deadline + 60_000,
      });
      expect(next - killedAt).toBeLessThanOrEqual(deadline);
    }
  });
});
