/**
 * Three instances of the service on one PostgreSQL: separate processes (`api/main.ts`, as
 * `npm start` runs it), each on its own port and DATA_DIR, sharing the database (`DATABASE_URL`) and a copy of one
 * keys folder (signing key, quota salt), as docs/deploy.md says to run them. They start at the same moment on an
 * empty database. Quotas, hosted rate limit and bands, the replay guard and the receipts must hold across the
 * instances, not per instance.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseServiceKey } from '../../core/service-key.ts';
import { parseTasks } from '../../core/tasks.ts';
import { runKnownAnswers } from '../../crawl/known-answers.ts';
import { knownAnswerDeps } from '../../crawl/known-answers-deps.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { loadSalt } from '../../io/secrets.ts';
import { runCli } from '../helpers/cli.ts';
import { integratorOnDatabase } from '../helpers/integrators.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { unservedReceipts } from '../helpers/receipts.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { fetchFrom, type PaidWorld, requirementOf, startPaidWorld, worldEnv } from '../helpers/world.ts';

// docs/api.md §8 literals, never read from core/limits.ts or core/hosted.ts.
const FREE_CHECKS = 5;
const PRICE = 20000n;
const RATE_PER_MINUTE = 120;
const PATH = '/v1/products/endpoint-spot-check';

describe.skipIf(postgresMissing !== null)('three instances on one PostgreSQL', { timeout: 240_000 }, () => {
  let pg: TestPostgres;
  let databaseUrl = '';
  let paid: PaidWorld;
  const dirs = [0, 1, 2].map((n) => mkdtempSync(join(tmpdir(), `spotcheck-instance-${n}-`)));
  let instances: ServerProcess[] = [];
  const receiptIds: string[] = [];

  beforeAll(async () => {
    pg = await startPostgres();
    databaseUrl = await pg.createDatabase();
    paid = await startPaidWorld({ buyers: 3 });
    // One keys folder, copied to every instance before any starts (docs/deploy.md).
    const keys = join(dirs[0]!, 'keys');
    await loadSigningKeys({ dir: keys });
    await loadSalt(keys);
    for (const dir of dirs.slice(1)) cpSync(keys, join(dir, 'keys'), { recursive: true });
    const env = {
      ...worldEnv(paid.world.state),
      DATABASE_URL: databaseUrl,
      PROBE_ALLOW_CIDRS: '127.0.0.0/8',
    };
    const ports = [await freePort(), await freePort(), await freePort()];
    // All three at once on the empty database: the migrations run once, under the advisory lock.
    instances = await Promise.all(dirs.map((dir, n) => startServerProcess(dir, ports[n]!, env)));
  }, 240_000);
  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await paid?.stop();
    await pg?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const checkUrl = (instance: ServerProcess) =>
    `${instance.base}${PATH}?${new URLSearchParams({ url: paid.world.sellers.urls['sdk-ok'] })}`;

  it('gives one client exactly 5 free answers of 100 parallel checks spread over the three', async () => {
    const ask = fetchFrom('198.18.7.1');
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => ask(checkUrl(instances[i % 3]!))),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(FREE_CHECKS);
    expect(statuses.filter((s) => s === 402)).toHaveLength(100 - FREE_CHECKS);
    const answers = await Promise.all(
      responses.filter((r) => r.status === 200).map((r) => r.json() as Promise<Record<string, unknown>>),
    );
    expect(answers.map((a) => (a.access as { free_used_today: number }).free_used_today).sort()).toEqual([
      1, 2, 3, 4, 5,
    ]);
    receiptIds.push(...answers.map((a) => String(a.receipt_id)));
    await Promise.all(responses.filter((r) => r.status !== 200).map((r) => r.body?.cancel()));
  });

  it('refuses on every other instance a payment accepted by one; the money moves once', async () => {
    const probe = await fetch(checkUrl(instances[0]!), { headers: { 'PAYMENT-SIGNATURE': 'not-base64!' } });
    expect(probe.status).toBe(402);
    const header = await paid.sign(0, requirementOf(probe));
    const before = await paid.balances(0);

    const first = await fetch(checkUrl(instances[0]!), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(first.status).toBe(200);
    const body = (await first.json()) as Record<string, unknown>;
    expect(body.access).toMatchObject({ tier: 'paid' });
    receiptIds.push(String(body.receipt_id));
    // Acknowledged means committed where every instance reads: another instance serves it at once.
    expect((await fetch(`${instances[2]!.base}/v1/receipts/${body.receipt_id}`)).status).toBe(200);
    for (const other of instances.slice(1)) {
      const replay = await fetch(checkUrl(other), { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(replay.status).toBe(402);
      expect((await replay.json()) as Record<string, unknown>).toMatchObject({
        error: 'payment_already_used',
      });
    }
    const after = await paid.balances(0);
    expect(after.service - before.service).toBe(PRICE);
    expect(before.buyer - after.buyer).toBe(PRICE);
  });

  it('lets one of three simultaneous uses of one payment through, one per instance', async () => {
    const probe = await fetch(checkUrl(instances[1]!), { headers: { 'PAYMENT-SIGNATURE': 'not-base64!' } });
    const header = await paid.sign(1, requirementOf(probe));
    const before = await paid.balances(1);
    const responses = await Promise.all(
      instances.map((instance) => fetch(checkUrl(instance), { headers: { 'PAYMENT-SIGNATURE': header } })),
    );
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(2);
    receiptIds.push(String(((await ok[0]!.json()) as Record<string, unknown>).receipt_id));
    expect(before.buyer - (await paid.balances(1)).buyer).toBe(PRICE);
  });

  /** Creates an integrator and a key with the operator CLI on the database; resolves once all three take the key. */
  const integrator = (id: string, creditLimitUsd: string) =>
    integratorOnDatabase(
      dirs[0]!,
      databaseUrl,
      id,
      creditLimitUsd,
      instances.map((instance) => instance.base),
    );
  const hostedCheck = (instance: ServerProcess, key: string) =>
    fetchFrom('198.18.9.1')(checkUrl(instance), { headers: { authorization: `Bearer ${key}` } });

  it('limits a hosted key to 120 checks a minute across the three', async () => {
    const key = await integrator('busy', '1000');
    const responses = await Promise.all(
      Array.from({ length: RATE_PER_MINUTE + 15 }, (_, i) => hostedCheck(instances[i % 3]!, key)),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(RATE_PER_MINUTE);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    const refused = responses.find((r) => r.status === 429);
    expect(refused?.headers.get('ratelimit')).toMatch(/^"hosted";r=0;t=\d+$/);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    await Promise.all(responses.map((r) => r.body?.cancel()));
  });

  it('numbers hosted calls exactly across the three: the bands, then the credit limit', async () => {
    // USD 0.10 of credit: past the 1,000 free calls of the month, five calls at USD 0.02.
    const key = await integrator('banded', '0.1');
    const month = new Date().toISOString().slice(0, 7);
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // A head start of 995 calls this month, as if made before.
      await admin`INSERT INTO hosted_usage (integrator, month, calls) VALUES ('banded', ${month}, 995)`;
    } finally {
      await admin.end();
    }
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => hostedCheck(instances[i % 3]!, key)),
    );
    const ok = responses.filter((r) => r.status === 200);
    const bodies = (await Promise.all(ok.map((r) => r.json()))) as Array<{
      access: { hosted: { band: string; price_atomic: string } };
      receipt_id: string;
    }>;
    expect(bodies.map((b) => b.access.hosted.band).sort()).toEqual([
      ...Array(5).fill('free_allowance'),
      ...Array(5).fill('standard'),
    ]);
    const refused = responses.filter((r) => r.status === 402);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.headers.get('x-service-hosted')).toBe('credit_limit');
    await Promise.all(refused.map((r) => r.body?.cancel()));
    const me = await fetch(`${instances[1]!.base}/v1/integrators/me`, { headers: { 'x-service-key': key } });
    expect(((await me.json()) as { current_month: { calls: number } }).current_month.calls).toBe(1005);
    receiptIds.push(...bodies.map((b) => b.receipt_id));
  });

  it('issues invoices from the shared usage with the CLI, served by every instance; a revoked key stops everywhere', async () => {
    const key = await integrator('billed', '100');
    const last = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15))
      .toISOString()
      .slice(0, 7);
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // 1,500 hosted calls last month: 500 past the free allowance at USD 0.02.
      await admin`INSERT INTO hosted_usage (integrator, month, calls) VALUES ('billed', ${last}, 1500)`;
    } finally {
      await admin.end();
    }
    const run = await runCli('invoices-cli.ts', ['--month', last], dirs[1]!, { DATABASE_URL: databaseUrl });
    expect(run.stderr).toBe('');
    const id = `inv-${last.replace('-', '')}-billed`;
    expect(JSON.parse(run.stdout)).toContainEqual({
      id,
      integrator: 'billed',
      total_atomic: '10000000',
      created: true,
    });
    for (const instance of instances) {
      const res = await fetch(`${instance.base}/v1/invoices/${id}`, { headers: { 'x-service-key': key } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { invoice: { total: { atomic: string } } }).invoice.total.atomic).toBe(
        '10000000',
      );
    }
    const pdf = await fetch(`${instances[2]!.base}/v1/invoices/${id}.pdf`, {
      headers: { 'x-service-key': key },
    });
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    await pdf.body?.cancel();

    const keyId = parseServiceKey(key)?.id ?? '';
    const revoked = await runCli('integrators-cli.ts', ['revoke', keyId], dirs[2]!, {
      DATABASE_URL: databaseUrl,
    });
    expect(revoked.code).toBe(0);
    for (const instance of instances) {
      await waitFor(
        async () => {
          const me = await fetch(`${instance.base}/v1/integrators/me`, { headers: { 'x-service-key': key } });
          await me.body?.cancel();
          return me.status === 401;
        },
        { what: `${instance.base} to refuse the revoked key`, intervalMs: 100 },
      );
    }
  });

  it("puts a known-answer run one instance took in into every instance's tasks and lookups", async () => {
    const parsed = parseTasks(paid.world.taskSellers.tasks);
    if (!parsed.ok) throw new Error(parsed.message);
    const task = parsed.value[0]!;
    const keys = await loadSigningKeys({ dir: join(dirs[0]!, 'keys') });
    // The run's wallet is funded from buyer 2 with a plain transfer, which needs gas (sandbox buyers hold no ETH).
    await paid.world.chain.testClient.setBalance({ address: paid.buyer(2).address, value: 10n ** 18n });
    const result = await runKnownAnswers(
      knownAnswerDeps({
        dataDir: dirs[0]!,
        baseUrl: instances[0]!.base,
        allowCidrs: '127.0.0.0/8',
        payerKey: paid.world.state.buyerKeys[2] as `0x${string}`,
        rpcUrl: paid.world.state.rpcUrls[0] ?? null,
        signer: keys.signer,
        progressOut: { write: () => true },
        log: () => {},
      }),
      { tasks: [task], n: 1, budgetUsd: '1', resume: false },
    );
    expect(result.committed).toBeGreaterThan(0n);
    // The run is published under the first instance's DATA_DIR; that one takes it in (at most a second later).
    await vi.waitFor(
      async () => {
        const res = await fetch(`${instances[0]!.base}/v1/tasks`);
        const names = ((await res.json()) as { tasks: Array<{ name: string }> }).tasks.map((t) => t.name);
        expect(names).toContain(task.name);
      },
      { timeout: 20_000, interval: 100 },
    );
    const right = new URL(paid.world.state.taskSellers[`${task.name}/right`]!.url).href;
    // Free lookups from one client: four of its five a day.
    const ask = fetchFrom('198.18.9.1');
    for (const instance of instances) {
      const res = await ask(`${instance.base}/v1/lookup?${new URLSearchParams({ endpoint: right, n: '3' })}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        results: Array<{ endpoint: string; calls: number; pass_rate: number }>;
      };
      expect(body.results.map((e) => [e.endpoint, e.calls, e.pass_rate])).toEqual([[right, 1, 1]]);
    }
    // The run's task is listed by the other two as well (they look at most once a second), and accepted by name.
    for (const instance of instances.slice(1)) {
      await vi.waitFor(
        async () => {
          const res = await fetch(`${instance.base}/v1/tasks`);
          const names = ((await res.json()) as { tasks: Array<{ name: string }> }).tasks.map((t) => t.name);
          expect(names).toContain(task.name);
        },
        { timeout: 20_000, interval: 200 },
      );
    }
    const byTask = await ask(
      `${instances[2]!.base}/v1/lookup?${new URLSearchParams({ task: task.name, n: '3' })}`,
    );
    expect(byTask.status).toBe(200);
    const ranked = (await byTask.json()) as { results: Array<{ endpoint: string }> };
    expect(ranked.results.map((e) => e.endpoint)).toContain(right);
  });

  it('serves every acknowledged receipt from every instance, the same bytes, and each verifies', async () => {
    expect(receiptIds).toHaveLength(FREE_CHECKS + 2 + 10);
    for (const instance of instances) {
      expect(await unservedReceipts(instance.base, receiptIds)).toEqual({ missing: [], invalid: [] });
    }
    for (const id of receiptIds) {
      const bodies = await Promise.all(
        instances.map(async (instance) => (await fetch(`${instance.base}/v1/receipts/${id}`)).text()),
      );
      expect(new Set(bodies).size).toBe(1);
    }
  });
});
