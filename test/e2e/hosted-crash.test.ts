/**
 * Hosted usage survives SIGKILL like the free quota: the real server in a child process with fsync
 * on answers concurrent hosted checks (of blocked addresses: no network needed) from three keys of one integrator,
 * is killed mid-stream, and after a restart the month counts every acknowledged call, at most the calls in flight
 * besides, and a clean restart after that counts them again exactly once.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seedIntegrator } from '../helpers/integrators.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-hosted-crash-'));
const WORKERS = 12;
let server: ServerProcess | null = null;

afterAll(async () => {
  server?.child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

const check = (base: string, n: number, key: string) =>
  fetch(
    `${base}/v1/products/endpoint-spot-check?url=${encodeURIComponent(`http://10.9.${(n >> 8) & 255}.${n & 255}/x`)}`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  );

async function monthCalls(base: string, key: string): Promise<number> {
  const me = (await (
    await fetch(`${base}/v1/integrators/me`, { headers: { 'x-service-key': key } })
  ).json()) as {
    current_month: { calls: number };
  };
  return me.current_month.calls;
}

describe('hosted usage and SIGKILL', () => {
  it('keeps every acknowledged hosted call, and counts each once after a clean restart', async () => {
    const keys = await seedIntegrator(dataDir, 'crashy', { keys: 3, creditLimitAtomic: '0' });
    const port = await freePort();
    server = await startServerProcess(dataDir, port, {});
    const acknowledged = { count: 0 };
    let n = 0;
    let killed = false;
    const worker = async (w: number) => {
      const key = keys[w % keys.length] ?? '';
      while (!killed) {
        try {
          const res = await check(server?.base ?? '', n++, key);
          if (res.status === 200) acknowledged.count++;
          else throw new Error(`status ${res.status}`);
        } catch {
          return; // the connection died with the server
        }
        if (acknowledged.count >= 240 && !killed) {
          killed = true;
          server?.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    await server.exited;
    expect(acknowledged.count).toBeGreaterThanOrEqual(240);

    server = await startServerProcess(dataDir, port, {});
    const afterCrash = await monthCalls(server.base, keys[0] ?? '');
    expect(afterCrash).toBeGreaterThanOrEqual(acknowledged.count);
    expect(afterCrash).toBeLessThanOrEqual(acknowledged.count + WORKERS);

    server.child.kill('SIGTERM');
    await server.exited;
    server = await startServerProcess(dataDir, port, {});
    expect(await monthCalls(server.base, keys[1] ?? '')).toBe(afterCrash);
    server.child.kill('SIGTERM');
    await server.exited;
  }, 120_000);
});
