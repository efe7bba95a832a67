/**
 * SIGKILL of one of three instances under load: every receipt any instance acknowledged is served
 * at once by the survivors, from PostgreSQL, and verifies; the killed instance, restarted on its DATA_DIR, serves
 * them too. `npm run receipts:export` then writes every receipt file again, from PostgreSQL and from the journals,
 * byte for byte as the instances wrote them (docs/deploy.md "Receipts"). The servers are real child processes
 * (`api/main.ts`, fsync on); the checks target addresses the SSRF gate blocks, so they need no network.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
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

  const acknowledged: string[] = [];

  it('loses no acknowledged receipt: the survivors serve every one at once, and so does the restarted one', async () => {
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

  it('writes every acknowledged receipt file again from PostgreSQL, and from the journals, as the instances wrote them', async () => {
    expect(acknowledged.length).toBeGreaterThanOrEqual(450);
    const fromPostgres = join(dirs[1]!, 'bucket');
    const run = await runCli('receipts-export-cli.ts', ['--out', fromPostgres], dirs[1]!, env);
    expect(run.code).toBe(0);
    const counts = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(counts).toMatchObject({ from: 'postgres', present: 0, refused: 0 });
    const names = new Set(readdirSync(fromPostgres));
    expect(counts.written).toBe(names.size);
    expect(acknowledged.filter((id) => !names.has(`${id}.json`))).toEqual([]);
    // As an auditor meets them: the verifier CLI over the folder, against the published keys.
    const jwks = join(dirs[1]!, 'keys', 'jwks.json');
    const audit = await runCli('../verify/cli.ts', [fromPostgres, '--jwks', jwks], dirs[1]!);
    expect(audit.code).toBe(0);
    expect(audit.stdout.match(/^OK /gm)).toHaveLength(names.size);

    // Each instance's journal, the running ones read as they run, gives the same files into one folder.
    const fromJournals = join(dirs[1]!, 'from-journals');
    for (const dir of dirs) {
      const each = await runCli(
        'receipts-export-cli.ts',
        ['--journal', join(dir, 'journal'), '--out', fromJournals],
        dir,
        env,
      );
      expect(each.code).toBe(0);
      expect(JSON.parse(each.stdout)).toMatchObject({ present: 0, refused: 0 });
    }
    for (const id of acknowledged) {
      const text = readFileSync(join(fromPostgres, `${id}.json`), 'utf8');
      expect(readFileSync(join(fromJournals, `${id}.json`), 'utf8')).toBe(text);
    }
    // And the files the instances wrote themselves are the same bytes.
    const own = readdirSync(join(dirs[2]!, 'receipts')).filter((name) => name.endsWith('.json'));
    expect(own.length).toBeGreaterThan(0);
    for (const name of own) {
      expect(readFileSync(join(dirs[2]!, 'receipts', name), 'utf8')).toBe(
        readFileSync(join(fromPostgres, name), 'utf8'),
      );
    }
  }, 120_000);
});
