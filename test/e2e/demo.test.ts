/**
 * `npm run demo` as CI runs it: `tsx sandbox/demo.ts --once` tours the product against the sandbox world and exits
 * 0, leaving nothing listening.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules', '.bin', 'tsx'),
      ['sandbox/demo.ts', '--once'],
      { cwd: ROOT, timeout: 90_000, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('npm run demo -- --once', () => {
  it('tours the product offline and exits 0', async () => {
    const { code, stdout, stderr } = await runDemo();
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/\[1\/7\] Sandbox world up/);
    expect(stdout).toMatch(/loopback passes the SSRF gate for this demo only/);
    expect(stdout).toMatch(/Imported 3 listings/);
    expect(stdout).toMatch(/sdk-ok\s+pay\s+price_below_listing/);
    expect(stdout).toMatch(/v1-only\s+skip\s+pay_to_mismatch/);
    expect(stdout).toMatch(/redirect-private\s+skip\s+ssrf_blocked/);
    expect(stdout).toMatch(/check 6: HTTP 402, asks 20000 atomic USDC on eip155:8453/);
    expect(stdout).toMatch(/tx 0x[0-9a-f]{64} \(block \d+, success\)/);
    expect(stdout).toMatch(/service wallet 0\.000000 → 0\.020000 USDC \(\+0\.020000\)/);
    expect(stdout).toMatch(/verified offline with the auditors' verifier \(kid [\w-]+\): ok/);
    expect(stdout).toMatch(/verdict changed to skip: bad_signature/);

    // Everything was shut down: the service URL it printed no longer answers.
    const health = /health\s+(http:\/\/127\.0\.0\.1:\d+\/healthz)/.exec(stdout)?.[1];
    expect(health).toBeDefined();
    await expect(fetch(health!)).rejects.toThrow();
  }, 120_000);
});
