/**
 * A shared database that stops answering, then one that is down: no request waits on it past its deadline
 * (io/postgres/wait.ts), each answers a 503 `database_unavailable` with `Retry-After` instead of hanging or a 500,
 * what needs no database is answered as before, and once the database is back nothing acknowledged is missing.
 * A real cluster, frozen with SIGSTOP (as a stopped or unreachable host would look to the service) and stopped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { unservedReceipts } from '../helpers/receipts.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const KEY = 'stall-exempt-key-0123456789abcdef';
// The deadline of each wait on the database, given to the server (`DATABASE_WAIT_MS`; its 10 s default is
// test/unit/api/config.test.ts's): the frozen phase waits it out, twice for a check, so it is short here.
const WAIT_MS = 3_000;

type Timed = { status: number; code: string | null; retryAfter: string | null; ms: number; body: unknown };

describe.skipIf(postgresMissing !== null)('a shared database that stops answering', () => {
  let pg: TestPostgres;
  let server: ServerProcess;
  let down = false;
  let databaseUrl = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-stall-'));
  const acknowledged: string[] = [];

  /** A request with its time to the answer; the body read as JSON when it is. */
  const timed = async (path: string, headers: Record<string, string> = {}): Promise<Timed> => {
    const started = performance.now();
    const res = await fetch(`${server.base}${path}`, { headers, signal: AbortSignal.timeout(60_000) });
    const body = await res.json().catch(() => null);
    const code = (body as { error?: { code?: string } } | null)?.error?.code ?? null;
    return {
      status: res.status,
      code,
      retryAfter: res.headers.get('retry-after'),
      ms: performance.now() - started,
      body,
    };
  };
  const checkPath = (n: number) =>
    `/v1/products/endpoint-spot-check?url=${encodeURIComponent(`http://10.9.${n}.1/x`)}`;
  const exempt = (n: number) => timed(checkPath(n), { 'x-service-key': KEY });
  const free = (n: number, client: string) => timed(checkPath(n), { 'x-forwarded-for': client });
  const answered = (result: Timed) => {
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const body = result.body as { receipt_id: string; access?: { free_used_today?: number } };
    acknowledged.push(body.receipt_id);
    return body;
  };
  /**
   * Resolves once no other session of the database is inside a query or a transaction: what the service sent before
   * the freeze has run to its end. A transaction frozen after its `BEGIN` sends its next statement only once the
   * service reads the answer, so a request made right after `SIGCONT` may otherwise get there first.
   */
  const quiet = async () => {
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
        const [row] = await admin<Array<{ busy: number }>>`SELECT count(*)::int AS busy FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`;
        if (row?.busy === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('the database stayed busy for 15 s after SIGCONT');
    } finally {
      await admin.end();
    }
  };
  const unavailable = (result: Timed) => {
    expect(result.status, JSON.stringify(result.body)).toBe(503);
    expect(result.code).toBe('database_unavailable');
    expect(result.retryAfter).toBe('5');
  };

  beforeAll(async () => {
    pg = await startPostgres();
    databaseUrl = await pg.createDatabase();
    const env = {
      DATABASE_URL: databaseUrl,
      EXEMPT_KEYS: `partner:${KEY}`,
      DATABASE_WAIT_MS: String(WAIT_MS),
    };
    server = await startServerProcess(dataDir, await freePort(), env);
  }, 60_000);
  afterAll(async () => {
    try {
      pg.signal('SIGCONT');
    } catch {}
    if (down) pg.up();
    if (server) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await pg?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('frozen: what needs it answers 503 once its deadline passed, the rest at once; a stalled unit stays used', async () => {
    for (let n = 0; n < 3; n++) answered(await exempt(n));
    expect(answered(await free(10, '198.51.100.7')).access?.free_used_today).toBe(1);

    pg.signal('SIGSTOP');
    let stalled: Timed[];
    try {
      stalled = await Promise.all([
        free(11, '198.51.100.7'), // the quota's reservation
        exempt(12), // the endpoint's history (read as unavailable), then the receipt's commit
        timed('/v1/receipts?page=1'),
        timed(`/v1/receipts/${acknowledged[0]}`), // this instance's own receipt: from memory
        timed('/healthz'),
      ]);
    } finally {
      pg.signal('SIGCONT');
    }
    const [quota, check, list, own, health] = stalled;
    for (const result of [quota, check, list]) unavailable(result as Timed);
    expect(quota?.ms).toBeGreaterThanOrEqual(WAIT_MS - 100);
    expect(quota?.ms).toBeLessThan(WAIT_MS + 3_000);
    expect(list?.ms).toBeLessThan(WAIT_MS + 3_000);
    // Two waits one after the other: the history read, then the commit.
    expect(check?.ms).toBeGreaterThanOrEqual(2 * WAIT_MS - 200);
    expect(check?.ms).toBeLessThan(2 * WAIT_MS + 4_000);
    expect(own?.status).toBe(200);
    expect(health?.status).toBe(200);
    expect(Math.max(own?.ms ?? Infinity, health?.ms ?? Infinity)).toBeLessThan(1_000);

    // Once the server went on, the stalled reservation committed: that unit stays used (fails closed, as a kill).
    await quiet();
    expect(answered(await free(13, '198.51.100.7')).access?.free_used_today).toBe(3);
    answered(await exempt(14));
    expect(await unservedReceipts(server.base, acknowledged)).toEqual({ missing: [], invalid: [] });
  }, 90_000);

  it('down: answers 503 at once while the server is stopped, and serves everything again once it is back', async () => {
    pg.down();
    down = true;
    let results: Timed[];
    try {
      results = [await free(20, '198.51.100.8'), await exempt(21), await timed('/v1/receipts?page=1')];
    } finally {
      pg.up();
      down = false;
    }
    for (const result of results) {
      unavailable(result);
      expect(result.ms).toBeLessThan(1_000);
    }
    // The pool opens new connections on its next queries.
    expect(answered(await free(22, '198.51.100.8')).access?.free_used_today).toBe(1);
    answered(await exempt(23));
    expect(await unservedReceipts(server.base, acknowledged)).toEqual({ missing: [], invalid: [] });
  }, 60_000);
});
