/**
 * Design promise 3: killing the server with SIGKILL at any moment loses nothing that was acknowledged and leaves
 * nothing corrupt. The real server runs in a child process with fsync on; checks of blocked addresses need no
 * network, so the test can answer hundreds of them, kill the process mid-stream and restart it on the same data.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../verify/verify.ts';
import { freePort, startServerProcess } from '../helpers/server-process.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'spotcheck-crash-'));
const KEY = 'crash-test-exempt-key-0123456789';
let child: ChildProcess | null = null;
let exited: Promise<unknown> = Promise.resolve();

afterAll(async () => {
  child?.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

async function startServer(port: number): Promise<string> {
  const started = await startServerProcess(dataDir, port, { EXEMPT_KEYS: `partner:${KEY}` });
  child = started.child;
  exited = started.exited;
  return started.base;
}

const check = (base: string, n: number, headers: Record<string, string>) =>
  fetch(
    `${base}/v1/products/endpoint-spot-check?url=${encodeURIComponent(`http://10.${(n >> 8) & 255}.${n & 255}.1/x`)}`,
    {
      headers,
    },
  );

describe('SIGKILL mid-stream', () => {
  it('keeps every acknowledged receipt, verifiable, and the day count of free checks', async () => {
    const port = await freePort();
    let base = await startServer(port);

    // Three free checks from one client before the crash.
    for (let i = 0; i < 3; i++) {
      expect((await check(base, 60_000 + i, { 'x-forwarded-for': '198.51.100.77' })).status).toBe(200);
    }

    const acknowledged: string[] = [];
    let n = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        try {
          const res = await check(base, n++, { 'x-service-key': KEY });
          if (res.status === 200)
            acknowledged.push(String(((await res.json()) as { receipt_id: string }).receipt_id));
        } catch {
          return; // the connection died with the server
        }
        if (acknowledged.length >= 300 && !killed) {
          killed = true;
          child?.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await exited;
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);

    base = await startServer(port);
    const jwks = await (await fetch(`${base}/.well-known/jwks.json`)).json();
    const missing: string[] = [];
    for (const id of acknowledged) {
      const res = await fetch(`${base}/v1/receipts/${id}`);
      if (res.status !== 200) {
        missing.push(id);
        continue;
      }
      const verdict = await verifyReceipt(await res.json(), jwks);
      expect(verdict.ok, `${id}: ${verdict.ok ? '' : verdict.reason}`).toBe(true);
    }
    expect(missing).toEqual([]);
    // Receipt files lag the answers (written after them, off the request path); the replay at start-up wrote
    // every one the kill left unwritten.
    const noFile = acknowledged.filter((id) => !existsSync(join(dataDir, 'receipts', `${id}.json`)));
    expect(noFile).toEqual([]);
    const listed = (await (await fetch(`${base}/v1/receipts?page_size=1`)).json()) as { total: number };
    expect(listed.total).toBeGreaterThanOrEqual(acknowledged.length + 3);

    const client = { 'x-forwarded-for': '198.51.100.77' };
    expect((await check(base, 61_000, client)).status).toBe(200);
    expect((await check(base, 61_001, client)).status).toBe(200);
    expect((await check(base, 61_002, client)).status).toBe(402);
    child?.kill('SIGTERM');
  }, 60_000);
});
