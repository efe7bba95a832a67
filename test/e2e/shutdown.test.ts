/**
 * SIGTERM while the database does not answer: the clean close cannot finish, so the service gives it a deadline and
 * then exits as a SIGKILL would (docs/architecture.md "Durability promises" 3: nothing acknowledged is lost), and a second signal exits at once.
 * A supervisor's stop never hangs on a stuck PostgreSQL. The database is a real cluster, frozen with SIGSTOP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { unservedReceipts } from '../helpers/receipts.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';

const KEY = 'shutdown-exempt-key-0123456789abcdef';
// The close deadline, short where the test waits it out (`SHUTDOWN_DEADLINE_MS`; its 30 s default is
// test/unit/api/config.test.ts's), and long where only a second signal may end the close.
const CLOSE_DEADLINE_MS = 4_000;
const LONG_DEADLINE_MS = 120_000;

describe.skipIf(postgresMissing !== null)('SIGTERM while PostgreSQL does not answer', () => {
  let pg: TestPostgres;
  let env: Record<string, string>;
  let port: number;
  const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-shutdown-'));
  let server: ServerProcess | null = null;

  const freeze = () => pg.signal('SIGSTOP');
  const thaw = () => pg.signal('SIGCONT');

  const start = (deadlineMs: number) =>
    startServerProcess(dataDir, port, { ...env, SHUTDOWN_DEADLINE_MS: String(deadlineMs) });
  const check = (base: string, n: number) =>
    fetch(`${base}/v1/products/endpoint-spot-check?url=${encodeURIComponent(`http://10.7.${n}.1/x`)}`, {
      headers: { 'x-service-key': KEY },
    });
  /** Checks answered before the freeze: their receipts must outlive any shutdown. */
  const answer = async (base: string, from: number, count: number) => {
    const ids: string[] = [];
    for (let n = from; n < from + count; n++) {
      const res = await check(base, n);
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { receipt_id: string }).receipt_id);
    }
    return ids;
  };
  /**
   * Freezes the database with one check in flight, so the close has work that cannot finish: returns once the
   * check's query waits unread at the frozen database, with that check's answer, wrapped (a promise returned bare
   * would be waited for).
   */
  const stuck = async (base: string) => {
    freeze();
    const before = pg.unreadBytes();
    const inFlight = check(base, 200).catch(() => null);
    await waitFor(() => pg.unreadBytes() > before, { what: 'a query waiting at the frozen database' });
    return { inFlight };
  };

  /** Lets the database go on, then starts the service again: it must serve every receipt acknowledged before. */
  const restartServing = async (acknowledged: string[], inFlight: Promise<unknown>) => {
    thaw();
    await inFlight;
    server = await start(LONG_DEADLINE_MS);
    expect(await unservedReceipts(server.base, acknowledged)).toEqual({ missing: [], invalid: [] });
  };

  beforeAll(async () => {
    pg = await startPostgres();
    env = { DATABASE_URL: await pg.createDatabase(), EXEMPT_KEYS: `partner:${KEY}` };
    port = await freePort();
  }, 60_000);
  afterAll(async () => {
    try {
      thaw();
    } catch {}
    if (server) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await pg?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('exits once its deadline has passed, then a restart serves every receipt it had acknowledged', async () => {
    server = await start(CLOSE_DEADLINE_MS);
    const acknowledged = await answer(server.base, 0, 5);
    const { inFlight } = await stuck(server.base);
    const sent = Date.now();
    server.child.kill('SIGTERM');
    // The close waits on the database: still running well into the deadline (a wait that is the test's subject).
    const early = await Promise.race([
      server.exited,
      new Promise((resolve) => setTimeout(resolve, CLOSE_DEADLINE_MS / 2, 'alive')),
    ]);
    expect(early).toBe('alive');
    expect(await server.exited).toBe(1);
    const took = Date.now() - sent;
    expect(took).toBeGreaterThanOrEqual(CLOSE_DEADLINE_MS - 100);
    expect(took).toBeLessThan(CLOSE_DEADLINE_MS + 10_000);
    expect(server.stderr()).toContain(`close did not finish in ${CLOSE_DEADLINE_MS / 1000} s`);
    await restartServing(acknowledged, inFlight);
  }, 90_000);

  it('exits at once on a second signal', async () => {
    server ??= await start(LONG_DEADLINE_MS);
    const acknowledged = await answer(server.base, 10, 3);
    const { inFlight } = await stuck(server.base);
    server.child.kill('SIGTERM');
    const closing = server;
    await waitFor(() => closing.stdout().includes('SIGTERM: closing'), {
      what: 'the server to take the SIGTERM',
    });
    const sent = Date.now();
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(1);
    expect(Date.now() - sent).toBeLessThan(3000);
    expect(server.stderr()).toContain('SIGINT again');
    await restartServing(acknowledged, inFlight);
  }, 60_000);
});
