/**
 * SIGKILL of one of three instances under load (issue 10 item 3): every receipt any instance acknowledged is served
 * at once by the survivors, from PostgreSQL, and verifies; the killed instance, restarted on its DATA_DIR, serves
 * them too. The servers are real child processes (`api/main.ts`, fsync on); the checks target addresses the SSRF
 * gate blocks, so they need no network.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { unservedReceipts } from '../helpers/receipts.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const KEY = 'instances-crash-exempt-key-0123456789';

describe.skipIf(postgresMissing !== null)('SIGKILL of one of three instances under load', () => {
  let pg: TestPostgres;
  const dirs = [0, 1, 2].map((n) => mkdtempSync(join(tmpdir(), `spotcheck-kill-${n}-`)));
  const ports: number[] = [];
  const running: ServerProcess[] = [];
  let env: Record<string, string> = {};

  beforeAll(async () => {
    pg = await startPostgres();
    env = { DATABASE_URL: await pg.createDatabase(), EXEMPT_KEYS: `partner:${KEY}` };
    for (let n = 0; n < 3; n++) ports.push(await freePort());
    // The first instance makes the keys folder; the others start with a copy of it (docs/deploy.md).
    running.push(await startServerProcess(dirs[0]!, ports[0]!, env));
    for (const n of [1, 2]) cpSync(join(dirs[0]!, 'keys'), join(dirs[n]!, 'keys'), { recursive: true });
    running.push(...(await Promise.all([1, 2].map((n) => startServerProcess(dirs[n]!, ports[n]!, env)))));
  }, 120_000);
  afterAll(async () => {
    for (const service of running) service.child.kill('SIGKILL');
    await Promise.all(running.map((service) => service.exited));
    await pg?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const check = (base: string, n: number) =>
    fetch(
      `${base}/v1/products/endpoint-spot-check?url=${encodeURIComponent(`http://10.${(n >> 8) & 255}.${n & 255}.1/x`)}`,
      { headers: { 'x-service-key': KEY } },
    );

  it('loses no acknowledged receipt: the survivors serve every one at once, and so does the restarted one', async () => {
    const acknowledged: string[] = [];
    let n = 0;
    let killed = false;
    let afterKill = 0;
    const worker = async (w: number) => {
      // Workers keep going on every instance, the killed one included, until 150 more answers came back.
      while (afterKill < 150) {
        const target = running[(w + n) % 3]!;
        const i = n++;
        try {
          const res = await check(target.base, i);
          if (res.status === 200) {
            acknowledged.push(String(((await res.json()) as { receipt_id: string }).receipt_id));
            if (killed) afterKill++;
          } else await res.body?.cancel();
        } catch {
          // The connection died with the killed instance: that answer was never acknowledged.
        }
        if (acknowledged.length >= 300 && !killed) {
          killed = true;
          running[0]!.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, w) => worker(w)));
    await running[0]!.exited;
    expect(acknowledged.length).toBeGreaterThanOrEqual(450);

    const verifyAll = async (base: string) =>
      expect(await unservedReceipts(base, acknowledged)).toEqual({ missing: [], invalid: [] });
    await verifyAll(running[1]!.base);
    await verifyAll(running[2]!.base);

    running[0] = await startServerProcess(dirs[0]!, ports[0]!, env);
    await verifyAll(running[0].base);
  }, 180_000);
});
